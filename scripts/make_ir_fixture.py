"""Write tests/data/kgc-sparsity-nations: a small kgc-sparsity folder built from PyKEEN's Nations.

The layout is that of Zhou et al.'s kgc-sparsity data (FB-Test-S, FB-Test-S-C with its
supplementary files, FB-Test-O's queries, names and relation categories), so the study
`ir` runs on Nations in the tiny CI workflow. Deterministic: the sample is drawn as
FB-Test-S was, sorted(random.Random(42).sample(range(test lines), size)) over Nations'
raw test file (as PyKEEN ships it, before any triple is dropped); the pooled candidates, their
depths and labels come from one more random.Random(42) stream. One human label carries a
stray space, as in the real files.

Usage: python scripts/make_ir_fixture.py [OUT_DIR]
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path

SAMPLE_SIZE = 50
POOLED_QUERIES = 20  # sample triples whose queries get pooled candidates
CANDIDATES_PER_QUERY = 3
MAX_DEPTH = 10


def write_rows(path: Path, rows: list[tuple]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(str(field) for field in row) + "\n" for row in rows), encoding="utf-8")


def categories(triples: list[tuple[str, str, str]]) -> dict[str, str]:
    """1-1, 1-N, N-1 or N-N per relation: mean tails per head and heads per tail against
    1.5, the rule of Bordes et al. (2013) that FB-Test-O's type_information follows."""
    tails, heads = defaultdict(lambda: defaultdict(set)), defaultdict(lambda: defaultdict(set))
    for head, relation, tail in triples:
        tails[relation][head].add(tail)
        heads[relation][tail].add(head)
    result = {}
    for relation in sorted(tails):
        per_head = sum(len(t) for t in tails[relation].values()) / len(tails[relation])
        per_tail = sum(len(h) for h in heads[relation].values()) / len(heads[relation])
        result[relation] = f"{'N' if per_tail >= 1.5 else '1'}-{'N' if per_head >= 1.5 else '1'}"
    return result


def queries(triples: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """trec_queries.txt rows: head{i} asks for the head given the tail, tail{i} the tail."""
    head_queries = sorted({(tail, relation) for _, relation, tail in triples})
    tail_queries = sorted({(head, relation) for head, relation, _ in triples})
    return [(f"head{i}", given, relation) for i, (given, relation) in enumerate(head_queries)] + [
        (f"tail{i}", given, relation) for i, (given, relation) in enumerate(tail_queries)
    ]


def main(out_dir: Path) -> None:
    from pykeen.datasets import Nations

    dataset = Nations()
    splits = {
        name: [tuple(row) for row in factory.triples.tolist()]
        for name, factory in (
            ("train", dataset.training),
            ("valid", dataset.validation),
            ("test", dataset.testing),
        )
    }
    # the sample is drawn over the raw file's lines, as FB-Test-S over FB15k-237's test.txt
    with Path(dataset.testing_path).open(encoding="utf-8") as handle:
        test = [tuple(line.rstrip("\n").split("\t")) for line in handle if line.strip()]
    known = set(splits["train"]) | set(splits["valid"]) | set(test)
    entities = sorted({e for triples in splits.values() for h, _, t in triples for e in (h, t)})

    indices = sorted(random.Random(42).sample(range(len(test)), SAMPLE_SIZE))
    sample = [test[index] for index in indices]
    write_rows(out_dir / "FB-Test-S/sample_idxs.txt", [(index,) for index in indices])
    write_rows(out_dir / "FB-Test-S/samples.txt", sample)

    generator = random.Random(42)
    pooled: list[tuple[tuple[str, str, str], int, str]] = []
    seen = set(sample)
    for head, relation, tail in generator.sample(sample, POOLED_QUERIES):
        side = generator.choice(("head", "tail"))
        others = [e for e in entities if e not in (head, tail)]
        for entity in generator.sample(others, CANDIDATES_PER_QUERY):
            triple = (entity, relation, tail) if side == "head" else (head, relation, entity)
            if triple in seen or triple in known:
                continue
            seen.add(triple)
            depth = generator.randint(1, MAX_DEPTH)
            pooled.append((triple, depth, "Y" if generator.random() < 0.3 else "N"))
    # the deepest pool enters at MAX_DEPTH, so that pooled-d0..d10 all exist
    last, _, label = pooled[-1]
    pooled[-1] = (last, MAX_DEPTH, label)

    annotations = [(*triple, "Y") for triple in sample] + [(*triple, label) for triple, _, label in pooled]
    write_rows(out_dir / "FB-Test-S-C/annotations.txt", annotations)
    relevant = [row[:3] for row in annotations if row[3] == "Y"]
    write_rows(out_dir / "FB-Test-S-C/test.txt", relevant)
    write_rows(out_dir / "FB-Test-S-C/trec_queries.txt", queries(relevant))
    write_rows(
        out_dir / "FB-Test-S-C/supplementary/pooling_depth.txt", [(*t, depth) for t, depth, _ in pooled]
    )
    # every other N is rejected automatically (filtered), the rest judged by people
    rejected = [t for i, (t, _, label) in enumerate(pooled) if label == "N" and i % 2 == 0]
    write_rows(out_dir / "FB-Test-S-C/supplementary/filtered.txt", [(*t, "N") for t in rejected])
    judged = [(*t, label) for t, _, label in pooled if t not in set(rejected)]
    stray = next(i for i, row in enumerate(judged) if row[3] == "N")
    judged[stray] = (*judged[stray][:3], " N")  # a stray space, as in the real human_labeled.txt
    write_rows(out_dir / "FB-Test-S-C/supplementary/human_labeled.txt", judged)

    write_rows(out_dir / "FB-Test-O/trec_queries.txt", queries(test))
    write_rows(out_dir / "FB-Test-O/mid2name.txt", [(e, e.replace("_", " ").title()) for e in entities])
    category_files = {"1-1": "one_to_one", "1-N": "one_to_many", "N-1": "many_to_one", "N-N": "many_to_many"}
    category_of = categories([t for triples in splits.values() for t in triples])
    for category, name in category_files.items():
        rows = [(relation,) for relation, found in category_of.items() if found == category]
        write_rows(out_dir / f"FB-Test-O/type_information/{name}.txt", rows)


if __name__ == "__main__":
    main(
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1] / "tests/data/kgc-sparsity-nations"
    )
