"""``tsumugi init`` and ``tsumugi add-performer``: a project of your own, and a performer added to it (ADR-0049).

Templates are package data (``templates/``), read with importlib.resources so they work from an installed
wheel; the scheduler's D1 migrations come from the installed ``tsumugi_scheduler`` package the same way.
"""

from tsumugi_dev.scaffold.add_performer import AddedPerformer, add_performer
from tsumugi_dev.scaffold.errors import ScaffoldError
from tsumugi_dev.scaffold.init_project import InitResult, init_project

__all__ = ["AddedPerformer", "InitResult", "ScaffoldError", "add_performer", "init_project"]
