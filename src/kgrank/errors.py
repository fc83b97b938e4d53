"""The one exception type for bad input: the CLI prints its message as a single line."""


class KgrankInputError(ValueError):
    """Bad input (file, config key, name). The message names the place and the fix."""


def stop_with(error: KgrankInputError, program: str = "kgrank") -> None:
    """Stop the process on bad input as the CLI does (``<program>: error: <message>`` on
    standard error, exit code 2, no traceback): for the Snakefile, where Snakemake would
    otherwise frame the message with the rule file and line and exit with 1."""
    import sys

    print(f"{program}: error: {error}", file=sys.stderr)
    raise SystemExit(2)
