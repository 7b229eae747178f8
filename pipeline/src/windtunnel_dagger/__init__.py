"""Wind Tunnel's Dagger module (dagger.json at the repo root, "source": "pipeline")."""

from .main import Certification as Certification
from .main import Windtunnel as Windtunnel
