"""kgrank.plotting: one style, a colour-blind-safe palette, PDF and PNG written together."""

import matplotlib.colors
import matplotlib.pyplot as plt
import pytest
import seaborn as sns

from kgrank.plotting import PALETTE, add_caption, save_figure, set_style


def _figure():
    figure, axis = plt.subplots(figsize=(3, 2))
    axis.plot([1, 2, 3], [3, 1, 2], label="line")
    axis.set_title("a title")
    return figure


def test_set_style_uses_the_colorblind_palette():
    plt.rcdefaults()
    set_style()
    assert PALETTE == "colorblind"
    cycle = [matplotlib.colors.to_hex(color) for color in plt.rcParams["axes.prop_cycle"].by_key()["color"]]
    assert cycle == sns.color_palette("colorblind").as_hex()
    assert cycle != sns.color_palette("deep").as_hex()  # seaborn's default would differ


def test_save_figure_writes_both_files_and_nothing_else(tmp_path):
    figure = _figure()
    save_figure(figure, tmp_path / "out" / "f.pdf", tmp_path / "out" / "f.png")
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["f.pdf", "f.png"]
    assert (tmp_path / "out" / "f.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / "out" / "f.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert not plt.fignum_exists(figure.number)


def test_save_figure_failure_leaves_no_temporary_file(tmp_path):
    (tmp_path / "f.png").write_bytes(b"old")
    with pytest.raises(ValueError):
        save_figure(_figure(), tmp_path / "f.pdf", tmp_path / "f.unknownformat")
    # the PDF was written, the failed PNG left the old file and no debris
    assert sorted(path.name for path in tmp_path.iterdir()) == ["f.pdf", "f.png"]
    assert (tmp_path / "f.png").read_bytes() == b"old"


def test_same_figure_same_bytes(tmp_path):
    for run in ("a", "b"):
        save_figure(_figure(), tmp_path / run / "f.pdf", tmp_path / run / "f.png")
    for name in ("f.pdf", "f.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_caption_is_wrapped_under_the_figure():
    figure = _figure()
    add_caption(figure, "word " * 100, characters_per_line=60)
    (caption,) = figure.texts
    lines = caption.get_text().splitlines()
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
    assert caption.get_position()[1] < 0
    empty = _figure()
    add_caption(empty, "")
    assert empty.texts == []
    plt.close("all")


@pytest.mark.parametrize("caption_width", [40, 150])
@pytest.mark.parametrize("layout", [None, "constrained"])
def test_both_files_are_cropped_as_tight_saving_crops_each(tmp_path, layout, caption_width):
    """Each file comes out as savefig(bbox_inches="tight") makes it, the caption under the
    axes included, also where the caption is wider than the figure. (A crop measured once
    for both files, with the PNG's text metrics, made such a PDF 10 pt narrower.)"""
    import re

    from PIL import Image

    def captioned() -> plt.Figure:
        figure, axis = plt.subplots(figsize=(3, 2), layout=layout)
        axis.plot([1, 2, 3], [3, 1, 2])
        axis.set_xlabel("a label")
        add_caption(figure, "a caption under the axes " * 12, characters_per_line=caption_width)
        return figure

    save_figure(captioned(), tmp_path / "once.pdf", tmp_path / "once.png")
    reference = captioned()
    reference.savefig(tmp_path / "tight.pdf", bbox_inches="tight")
    reference.savefig(tmp_path / "tight.png", bbox_inches="tight", dpi=200)
    plt.close(reference)

    def media_box(path):
        match = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", path.read_bytes())
        return float(match[1]), float(match[2])

    once, tight = Image.open(tmp_path / "once.png").size, Image.open(tmp_path / "tight.png").size
    assert tight[1] > 2 * 200  # the caption hangs below the 2-inch figure and is kept
    assert all(abs(a - b) <= 2 for a, b in zip(once, tight, strict=True)), (once, tight)
    assert media_box(tmp_path / "once.pdf") == pytest.approx(media_box(tmp_path / "tight.pdf"), abs=1.0)


def test_every_system_gets_its_own_style_and_a_model_the_same_everywhere():
    """Issue 47: the drift figure gave eight systems one colour. Each system now has a
    (colour, line style) of its own, a trained model the same one in every figure."""
    from kgrank.plotting import MODEL_ORDER, system_styles

    eight = ["transe", "rotate", "complex", "tucker", "pk-folder", "pk-ranks", "pk-scores", "distmult"]
    styles = system_styles(eight)
    assert len(set(styles.values())) == 8
    assert (
        system_styles(["complex"])["complex"]
        == styles["complex"]
        == system_styles(list(MODEL_ORDER))["complex"]
    )
    many = system_styles([f"system-{index}" for index in range(12)])
    assert len(set(many.values())) == 12  # past the palette's ten colours, another line style
