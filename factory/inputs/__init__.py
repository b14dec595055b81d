"""The inputs stage: Hypothesis draws arguments for each program from the grammar's type specs."""
