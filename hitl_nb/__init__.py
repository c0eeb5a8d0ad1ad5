"""hitl-nb: answer A2A ``hitl-prompt/v1`` prompts inline in Jupyter."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
