"""Study `ir` (Zhou, Shi, Li, Liu & Ding 2022, "Re-thinking Knowledge Graph Completion
Evaluation from an Information Retrieval Perspective"): micro vs macro metrics, MAP@20 and
nDCG@20 as trec_eval computes them, label sparsity and TREC pooling (FB-Test-S against its
relabelled version FB-Test-S-C), the stability of system rankings under test subsampling,
discriminative power, and the macro metrics' expectation under the random model, which the
paper does not have.

Modules: ``commands`` (the `kgrank ir-*` subcommands), ``settings`` (what the rule file
reads), ``kgc_sparsity`` (the kgc-sparsity files through the dataset's ids), ``evaluation``
(one scoring pass per system: the item table, run lists and qrels), ``trec`` (TREC files and
ir-measures), ``aggregate``, ``agreement`` (label sparsity), ``stability``,
``discrimination``, ``montecarlo`` (the macro moments against simulation), ``figures``,
``report`` (report tables and captions).
"""
