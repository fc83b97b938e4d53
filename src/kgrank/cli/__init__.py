"""The ``kgrank`` command line: ``main`` builds the parser from the stages' commands, the
user commands (``evaluate``, ``compare``, ``scorecard``) and each registered study's
``add_commands``. The only part of the core that may import the study registry."""
