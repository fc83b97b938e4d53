"""The training benchmark's accounting measures the step it says: its loss is the loss
the step computes, fused or PyKEEN's, and the benchmark leaves the code as it found it.
Nothing here is timed (speed is measured by the benchmarks themselves)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def training_benchmark():
    spec = importlib.util.spec_from_file_location("training_benchmark", REPO / "benchmarks" / "training.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("family", "other_loss", "loss_text"),
    [
        ("complex", None, "kgrank's fused CrossEntropyLoss"),
        ("rotate", None, "kgrank's fused NSSALoss"),
        # a loss with no fused form goes through PyKEEN's on the dense labels
        ("complex", "pointwisehinge", "PyKEEN's PointwiseHingeLoss on dense labels"),
    ],
)
def test_step_accounting_takes_the_loss_the_step_computes(
    training_benchmark, nations_dir, family, other_loss, loss_text
):
    from pykeen.losses import loss_resolver

    import kgrank.training.step as step_module
    from kgrank.data.datasets import load_factories
    from kgrank.training.train import build_model, create_inverse_triples

    pipeline, training = training_benchmark.setting("nations", family)
    factories = load_factories(nations_dir, create_inverse_triples=create_inverse_triples(pipeline))
    model = build_model(pipeline, factories.training, seed=0)
    if other_loss:
        model.loss = loss_resolver.make(other_loss)
    model.train()
    fused = step_module.lcwa_loss_from_positives
    optimizer = training_benchmark.make_optimizer(pipeline, model, fast=True)
    seconds, batches_per_epoch, (outside, text) = training_benchmark.time_steps(
        model, optimizer, factories.training, 32, 1, 0.0, True, breakdown=True
    )
    assert len(seconds) == 1 and batches_per_epoch > 1
    assert outside > 0.0
    num_entities = factories.training.num_entities
    assert f"loss ({loss_text}, forward and backward over the 32 x {num_entities:,} score block)" in text
    assert "copies of the block" in text and "optimiser" in text and "outside operators" in text
    # the step's own loss is back in place, the module's and the loss object's
    assert step_module.lcwa_loss_from_positives is fused
    assert "process_lcwa_scores" not in vars(model.loss)


def test_the_captured_loss_is_the_steps_and_the_accounting_puts_the_weights_back(
    training_benchmark, nations_dir
):
    """The captured call, given the captured scores, returns what the step's loss returned;
    after the accounting (which runs the optimiser) the weights are those before it."""
    from pykeen.training import LCWATrainingLoop

    import kgrank.training.step as step_module
    from kgrank.data.datasets import load_factories
    from kgrank.training.step import fast_scores, sparse_label_batches
    from kgrank.training.train import build_model

    pipeline, _ = training_benchmark.setting("nations", "complex")
    factories = load_factories(nations_dir, create_inverse_triples=True)
    model = build_model(pipeline, factories.training, seed=0)
    optimizer = training_benchmark.make_optimizer(pipeline, model, fast=True)
    values = []
    fused = step_module.lcwa_loss_from_positives

    def recorded(*args):
        values.append(fused(*args).detach())
        return fused(*args)

    with fast_scores(model):
        loop = LCWATrainingLoop(model=model, triples_factory=factories.training, optimizer=optimizer)
        assert sparse_label_batches(loop)
        loader = loop._create_training_data_loader(
            factories.training, sampler=None, batch_size=16, shuffle=False, drop_last=False
        )
        batch = next(iter(loader))

        def one_step() -> None:
            loop._forward_pass(batch, 0, 16, 16, 0.1, slice_size=None)

        step_module.lcwa_loss_from_positives = recorded
        try:
            loss, scores, name = training_benchmark.captured_loss(one_step, loop)
        finally:
            step_module.lcwa_loss_from_positives = fused
        step_value = values.pop()
        assert not values and scores.shape == (16, factories.training.num_entities)
        assert name == "kgrank's fused CrossEntropyLoss"
        assert torch.equal(loss(scores.clone().requires_grad_(True)).detach(), step_value)
        before = {key: value.clone() for key, value in model.state_dict().items()}
        _, text = training_benchmark.step_accounting(one_step, loop, loader)
    assert "its exp alone" in text
    after = model.state_dict()
    assert all(torch.equal(after[key], value) for key, value in before.items())


def test_the_gpu_benchmarks_cross_device_table_runs_on_the_cpu():
    """benchmarks/gpu.py's first table (kgrank's ranks on the device against its ranks on
    the CPU, per tie rule) runs with the CPU as the device: every family, both rules, each
    share 100 %, so that a run on a GPU fails on the GPU's account only."""
    spec = importlib.util.spec_from_file_location("gpu_benchmark", REPO / "benchmarks" / "gpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.tie_rule_across_devices(torch.device("cpu"))
    assert len(rows) == len(module.SMALL_FAMILIES)
    assert all(row.endswith("| 100.0000% | 100.0000% |") for row in rows), rows
