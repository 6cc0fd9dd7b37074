"""`python -m cudalogs` is the same as the `cudalogs` command."""

from cudalogs.cli import main

main()
