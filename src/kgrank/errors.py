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


def yaml_refusal(path: object, error: Exception, fix: str = "fix the syntax there") -> KgrankInputError:
    """A YAML parse error as one line with the file and line: PyYAML's own message spans
    several lines (the offending text and a caret under it)."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    what = getattr(error, "problem", None) or getattr(error, "context", None) or str(error).splitlines()[0]
    return KgrankInputError(f"{path}{where}: not valid YAML ({what}); {fix}")
