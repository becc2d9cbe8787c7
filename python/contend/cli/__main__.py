"""``python -m contend.cli``: the same as the ``contend`` command."""

from contend.cli import main

main()
