"""Script studies: space files, the script runner, and ``mftune.report`` for scripts."""
