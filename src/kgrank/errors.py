"""The one exception type for bad input: the CLI prints its message as a single line."""


class KgrankInputError(ValueError):
    """Bad input (file, config key, name). The message names the place and the fix."""
