"""``python -m tsumugi_dev dev ...`` runs the ``tsumugi`` command."""

from tsumugi_dev.cli import main

main()
