"""The file each additive assignment starts from: it runs, and its grader fails it."""
