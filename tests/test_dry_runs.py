"""Dry runs of the workflow: a config that does not validate stops the plan before any
job, naming the key; the studies switch on and off; the paper profile plans every job;
the lint is clean. Apart from tests/test_workflow.py, whose tests share one run of the
tiny DAG, so that under pytest-xdist these go to another worker."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, planned_jobs, snakemake

pytestmark = pytest.mark.slow


def test_bad_config_stops_before_any_job(tmp_path):
    """The message alone, as the CLI gives it: one line, exit code 2, no frame naming a rule
    file and no traceback (Snakemake's own lines about the profile and config come first)."""
    result = snakemake(tmp_path, "-n", "--config", "models=[transe,transee]")
    assert result.returncode == 2
    ours = [line for line in result.stderr.splitlines() if not line.startswith(SNAKEMAKE_INFO)]
    assert len(ours) == 1, result.stderr
    assert ours[0].startswith("snakemake: error: ") and ours[0].endswith("from `datasets` in the config")
    assert "nations/transee.yaml: no hyperparameters for model 'transee'" in ours[0]
    assert "Traceback" not in result.stderr and "common.smk" not in result.stderr
    assert not (tmp_path / "results").exists()


def test_an_alias_bomb_config_stops_before_the_checks_walk_it(tmp_path):
    """A 1 KB config of nested aliases (a billion values) stops at once, in one line."""
    from test_io import alias_bomb

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb(9) + (REPO / ".test" / "config.yaml").read_text())
    result = snakemake(tmp_path, "-n", "--configfile", str(bomb))
    assert result.returncode == 2, result.stderr[-2000:]
    assert "bomb.yaml: its aliases (*name) expand to more than" in result.stderr
    assert "Traceback" not in result.stderr


# What Snakemake itself prints before a parse-time error of ours.
SNAKEMAKE_INFO = ("Using workflow specific profile", "Config file ")


def _misspelt_hyperparameters(tmp_path: Path) -> str:
    """A hyperparameter folder whose Nations TransE file says `embeding_dim`."""
    folder = tmp_path / "hyperparameters"
    shutil.copytree(REPO / "config" / "hyperparameters" / "nations", folder / "nations")
    path = folder / "nations" / "transe.yaml"
    path.write_text(path.read_text().replace("embedding_dim", "embeding_dim"))
    return str(folder)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            lambda tmp: "datasets={nation: {source: pykeen}}",
            "key datasets.nation: PyKEEN has no dataset 'nation'",
        ),
        (
            lambda tmp: f"hyperparameters_dir={_misspelt_hyperparameters(tmp)}",
            "transe.yaml: key pipeline.model_kwargs.embeding_dim: pykeen's TransE takes no argument",
        ),
        (
            lambda tmp: "models=[transe,../../escaped]",
            "key models.1: '../../escaped': a name may hold only letters, digits, '_' and '-'",
        ),
    ],
    ids=["unknown-pykeen-dataset", "misspelt-model-kwarg", "model-name-leaving-results"],
)
def test_bad_names_stop_the_dry_run(tmp_path, config, expected):
    """What used to fail only inside a job now stops the plan, naming the key."""
    result = snakemake(tmp_path, "-n", "--config", config(tmp_path))
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "configfile", [[], ["--configfile", str(REPO / ".test" / "config.yaml")]], ids=["default", "tiny"]
)
def test_lint_is_clean(configfile):
    """The tiny config defines the rules of external systems too."""
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--lint", *configfile],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_every_study_has_a_notebook():
    from kgrank.studies import study_names

    assert {f"{name}.ipynb" for name in study_names()} <= {
        path.name for path in (REPO / "notebooks").glob("*.ipynb")
    }


def _with_config(workdir: Path, configfile: Path) -> list[str]:
    """Snakemake on this repository's Snakefile in ``workdir`` with ``configfile`` alone
    (not the tiny config that :func:`snakemake` names)."""
    return [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(configfile),
    ]


@pytest.mark.parametrize("profile", [None, "slurm"])
def test_paper_profile_plans_every_job(tmp_path, profile):
    """config/paper.yaml plans all 16 pairs (and the ir study's three further systems) at the
    published epochs, locally and on SLURM.

    The default config sits where Snakemake looks for it, as in a checkout: the named
    config file must replace it, not inherit its laptop budget."""
    shared = REPO.parent / "shared" / "reference"
    (tmp_path / "config").mkdir()
    shutil.copy(REPO / "config" / "config.yaml", tmp_path / "config" / "config.yaml")
    arguments = [
        *_with_config(tmp_path, REPO / "config" / "paper.yaml"),
        "-n",
        "-p",
        "--config",
        f"studies={{paper: {{published_values: {shared / 'published_figure1.tsv'}, "
        f"published_results: {shared / 'published_results.tsv'}}}}}",
    ]
    if profile:
        arguments += ["--profile", str(REPO / "workflow" / "profiles" / profile)]
    else:
        arguments += ["--cores", "16"]
    if not shared.is_dir():
        pytest.skip("the shared reference tables are not beside the repository")
    result = subprocess.run(arguments, capture_output=True, text=True, check=False)
    plan = planned_jobs(result)
    train_commands = [line for line in result.stdout.splitlines() if "kgrank train" in line]
    # the 16 pairs, and the ir study's three further systems on FB15k-237
    assert len(train_commands) == 19
    extra = [
        line for line in train_commands if any(f"/{m}.yaml" in line for m in ("distmult", "rescal", "conve"))
    ]
    assert len(extra) == 3 and all("fb15k237/" in line for line in extra)
    assert not any("--max-epochs" in line or "--training-loop" in line for line in train_commands)
    assert {rule: plan.get(rule) for rule in ("prepare_dataset", "train", "ranks", "metrics")} == {
        "prepare_dataset": 4,
        "train": 19,
        "ranks": 16,
        "metrics": 16,
    }
    assert {
        "paper_published_audit",
        "paper_compare_published",
        "paper_figure1_published",
        "moments_montecarlo",
        "moments_errata",
    } <= set(plan)


def with_studies(tmp_path: Path, studies: dict) -> list[str]:
    """Arguments that run the tiny config with its `studies` section replaced."""
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    config["studies"] = studies
    # sampled rank files named in the config are targets of their own (they need models)
    config["ranks"]["sampled_candidates"] = []
    path = tmp_path / "studies.yaml"
    path.write_text(yaml.safe_dump(config))
    return ["--configfile", str(path)]


@pytest.mark.parametrize(
    ("studies", "expected", "absent"),
    [
        # the moments study needs the datasets, never a model
        (
            {"moments": {}},
            {"prepare_dataset", "moments_table", "moments_montecarlo", "moments_errata"},
            {"train", "paper_figure1"},
        ),
        # listed but switched off: nothing of it runs
        (
            {"moments": {}, "paper": {"enabled": False}},
            {"moments_montecarlo"},
            {"train", "paper_figure1", "paper_table4"},
        ),
        (
            {"paper": {}},
            {"train", "ranks", "metrics", "paper_figure1", "paper_table4"},
            {"moments_montecarlo", "moments_errata"},
        ),
        # the ambiguity study reads the rank tables and, for its subsets, the models
        (
            # sizes below Nations' 14 entities: the defaults (10 ... 1000) exceed the only
            # dataset here and are refused before any job
            {"ambiguity": {"candidate_sizes": [5, 10, "all"]}},
            {"train", "ranks", "ambiguity_variants", "ambiguity_subsets", "ambiguity_pairwise"},
            {"moments_montecarlo", "openworld_simulate", "paper_figure1"},
        ),
        # the open-world simulation needs neither datasets nor models
        (
            {"openworld": {"family_tree": {"enabled": False}}},
            {"openworld_simulate", "openworld_inconsistency", "openworld_saturation"},
            {"prepare_dataset", "train", "openworld_family_tree"},
        ),
    ],
)
def test_studies_switch_on_and_off(tmp_path, studies, expected, absent):
    result = snakemake(tmp_path, "-n", *with_studies(tmp_path, studies))
    plan = planned_jobs(result)
    assert expected <= set(plan), plan
    assert not absent & set(plan), plan


def test_family_tree_without_configurations_stops_before_any_job(tmp_path):
    result = snakemake(tmp_path, "-n", *with_studies(tmp_path, {"openworld": {}}))
    assert result.returncode != 0
    assert "studies.openworld.family_tree.configurations: empty" in result.stdout + result.stderr


def _tiny_with(tmp_path: Path, change) -> list[str]:
    """Arguments that run the tiny config after ``change(config)``."""
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    change(config)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(config))
    return ["--configfile", str(path)]


def _family_tree_configuration(config: dict) -> dict:
    return config["studies"]["openworld"]["family_tree"]["configurations"]["complex-d8"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda config: _family_tree_configuration(config).update(model="complx"),
            "key studies.openworld.family_tree.configurations.complex-d8.model: unknown model 'complx'",
        ),
        (
            lambda config: config["studies"]["openworld"]["simulation"]["strength"].update(
                start=0.9, stop=0.3
            ),
            "key studies.openworld.simulation.strength: start 0.9 > stop 0.3",
        ),
        (
            lambda config: config["budget"].update(
                by_dataset={"nations": {"transe": {"learning_rate": -0.1}}}
            ),
            "key budget.by_dataset.nations.transe.learning_rate: -0.1 is less than or equal",
        ),
        (
            lambda config: config["studies"]["ambiguity"].update(candidate_sizes=[5, 20, "all"]),
            "key studies.ambiguity.candidate_sizes: 20 candidates per task, but the largest dataset",
        ),
        (
            # Nations' 14 entities leave a task at most 13 other candidates
            lambda config: config["ranks"].update(sampled_candidates=[5, 13]),
            "key ranks.sampled_candidates: 13 candidates per task, but nations has 14 entities",
        ),
    ],
    ids=["family-tree-model", "reversed-strengths", "budget-learning-rate", "candidate-size", "sampled-size"],
)
def test_bad_values_stop_the_dry_run(tmp_path, change, expected):
    """What used to fail (or be dropped) inside a job now stops the plan, naming the key."""
    result = snakemake(tmp_path, "-n", *_tiny_with(tmp_path, change))
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


def test_unknown_study_stops_before_any_job(tmp_path):
    result = snakemake(tmp_path, "-n", *with_studies(tmp_path, {"ambiguty": {}}))
    assert result.returncode != 0
    assert "key studies.ambiguty: no such study" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


def test_paper_profile_plans_the_whole_family_tree(tmp_path):
    """config/paper.yaml runs the open-world family tree in full: 4 densities x 9
    configurations (three per model), each evaluated on both graph variants."""
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    config["studies"] = {"openworld": config["studies"]["openworld"]}
    path = tmp_path / "paper-openworld.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [*_with_config(tmp_path, path), "-n", "--cores", "16"], capture_output=True, text=True, check=False
    )
    plan = planned_jobs(result)
    assert plan.get("openworld_family_tree") == 36, plan
    assert {"openworld_simulate", "openworld_inconsistency", "openworld_inversions"} <= set(plan)
    assert "train" not in plan  # the family tree trains its own models, not the stage's pairs


def test_the_configs_device_reaches_every_rule_that_scores(tmp_path):
    """Issue 46: with `device:` set, every rule that scores with a model (ranks, sampled
    ranks, external systems, the IR pass, the subsets, the ties, the family tree) and
    training pass it on, and each command, parsing its own line, takes it."""
    import shlex

    from kgrank.cli.main import build_parser

    result = snakemake(tmp_path, "-n", "-p", "--config", "device=cuda:1")
    assert result.returncode == 0, result.stderr[-2000:]
    # Snakemake prints each job as "rule NAME:" ... "Shell command: kgrank ... 2>&1 | tee log"
    commands, rule = [], None
    for line in result.stdout.splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[1].rstrip(":")
        elif line.startswith("Shell command: kgrank "):
            commands.append(
                (rule, line.split("Shell command:", 1)[1].split("|")[0].replace("2>&1", "").strip())
            )
    scoring = {"ranks", "ambiguity-subsets", "ir-evaluate", "protocols-ties-pair", "openworld-family-tree"}
    scoring |= {"evaluate", "train"}
    seen, rules = set(), set()
    parser = build_parser()
    for rule, command in commands:
        words = shlex.split(command)
        if words[1] not in scoring:
            continue
        seen.add(words[1])
        rules.add(rule)
        assert parser.parse_args(words[1:]).device == "cuda:1", command
    assert seen == scoring
    # and on a cluster each of those rules goes where the GPU is
    profile = yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
    assert {"ranks", "sampled_ranks", "external_ranks", "ir_evaluate", "train"} <= rules, rules
    for rule in rules:
        resources = profile["set-resources"].get(rule, {})
        assert (resources.get("slurm_partition"), resources.get("gpu")) == ("gpu", 1), rule


def test_an_external_pykeen_folder_is_rescored_unless_rescore_is_false(tmp_path):
    """pk-folder of the tiny config joins every rule that rescores a model; with
    `rescore: false` it keeps to its ranks and metrics."""

    def keep_to_ranks(config: dict) -> None:
        config["external_systems"]["nations"]["pk-folder"]["rescore"] = False
        config["studies"]["ambiguity"]["subsets"]["pairs"] = ["nations/transe"]

    rescoring = (
        "ranks/nations/pk-folder.sampled-5.parquet",
        "ambiguity/subsets/nations/pk-folder.parquet",
        "protocols/ties/nations/pk-folder.tsv",
        "ir/nations/items/pk-folder.parquet",
    )
    for change, planned in ((lambda config: None, True), (keep_to_ranks, False)):
        result = snakemake(tmp_path, "-n", *_tiny_with(tmp_path, change))
        assert result.returncode == 0, result.stderr[-2000:]
        assert "results/ranks/nations/pk-folder.parquet" in result.stdout
        assert [path in result.stdout for path in rescoring] == [planned] * len(rescoring)


def test_seeds_plan_further_runs_and_the_comparison(tmp_path):
    """comparison.seeds adds a run of every trained pair but the one seeds_by_pair sets
    (TransE: seeds 7 and 8 in the tiny config); the run of `seed` is never trained twice;
    `enabled: false` drops the comparison, not the runs."""

    def global_seeds(config: dict) -> None:
        config["comparison"]["seeds"] = [9, 7]

    def switched_off(config: dict) -> None:
        global_seeds(config)
        config["comparison"]["enabled"] = False

    for change, compared in ((global_seeds, True), (switched_off, False)):
        result = snakemake(tmp_path, "-n", *_tiny_with(tmp_path, change))
        jobs = planned_jobs(result)
        assert jobs["train"] == 2 and jobs["train_run"] == jobs["ranks_run"] == jobs["metrics_run"] == 2
        for path in ("seeds/9/models/nations/complex/model.pt", "seeds/8/metrics/nations/transe.tsv"):
            assert f"results/{path}" in result.stdout
        assert "results/seeds/9/models/nations/transe" not in result.stdout
        assert "results/seeds/7/" not in result.stdout
        assert ("compare" in jobs) == compared


def test_the_further_training_runs_ask_the_cluster_for_what_their_stage_rules_ask():
    """train_run and ranks_run (comparison.seeds) are rule names of their own: the SLURM
    profile gives them train's and ranks' resources and threads, or a second seed of the
    published configuration would go to the cpu partition for 60 minutes."""
    profile = yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
    for rule in ("train", "ranks"):
        assert profile["set-resources"][f"{rule}_run"] == profile["set-resources"][rule]
        assert profile["set-threads"][f"{rule}_run"] == profile["set-threads"][rule]
