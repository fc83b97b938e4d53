"""What the Snakemake workflow asks of the package at parse time: the validated config,
job cost estimates for priorities, which parts an external system joins, and the
remembered answers of PyKEEN's parse-time checks."""
