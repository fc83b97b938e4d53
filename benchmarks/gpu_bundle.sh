#!/bin/bash
# Packs what benchmarks/gpu.py needs on a GPU machine without a network, whose Python
# (3.12, x86-64, with a CUDA build of torch) lacks PyKEEN: the wheels PyKEEN and kgrank
# bring beyond such an image, into .whl/, and the two prepared datasets and the published
# results, into .gpudata/ (both ignored by git). On the GPU machine, from the repository:
#   bash benchmarks/gpu_bundle.sh --run COMMIT OUT_DIR
# Here (with a network to PyPI and a finished default run):
#   bash benchmarks/gpu_bundle.sh --pack [RESULTS_DIR] [PUBLISHED_TSV]
set -euo pipefail
# pinned: the versions kgrank's tests ran with (pykeen 1.11.1)
WHEELS=(
  pykeen==1.11.1 class-resolver==0.8.2 docdata==0.0.5 more-click==0.1.3 more-itertools==11.2.1
  pystow==0.10.3 torch-max-mem==0.1.6 torch-ppr==0.0.8 optuna==5.0.0 SQLAlchemy==2.0.58
  greenlet==3.5.6 alembic==1.20.1 Mako==1.4.3 colorlog==6.12.0 click-default-group==1.2.4
  dataclasses-json==0.6.7 marshmallow==3.26.2 backports.zstd==1.8.0 ir-measures==0.4.3
  pytrec-eval-terrier==0.5.11 jsonschema==4.26.0 jsonschema-specifications==2025.9.1
  referencing==0.37.0 rpds-py==2026.9.1
)
case "${1:-}" in
  --pack)
    results="${2:-results}"
    published="${3:-../shared/reference/published_results.tsv}"
    mkdir -p .whl .gpudata
    platforms=()
    for tag in 2_17 2_24 2_27 2_28 2_31 2_34; do platforms+=(--platform "manylinux_${tag}_x86_64"); done
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      "${platforms[@]}" --platform manylinux2014_x86_64 -d .whl "${WHEELS[@]}"
    tar -C "$results/data" -czf .gpudata/data.tgz fb15k237 wn18rr
    cp "$published" .gpudata/published_results.tsv
    du -sh .whl .gpudata
    ;;
  --run)
    commit="$2" out="$3"
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:$PWD/src" PYTHONUNBUFFERED=1
    mkdir -p /tmp/data "$out" && tar -C /tmp/data -xzf .gpudata/data.tgz
    nvidia-smi --query-gpu=name,driver_version --format=csv
    set -o pipefail
    python3 benchmarks/gpu.py --data /tmp/data --families complex rotate transe tucker distmult rescal conve \
      --published .gpudata/published_results.tsv --commit "$commit" --out "$out" 2>&1 \
      | grep -v "Encountered tensors" | tee "$out/log"
    ;;
  *)
    echo "usage: bash benchmarks/gpu_bundle.sh --pack [RESULTS_DIR] [PUBLISHED_TSV] | --run COMMIT OUT_DIR" >&2
    exit 2
    ;;
esac
