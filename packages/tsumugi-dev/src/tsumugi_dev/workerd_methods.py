"""HTTP methods workerd's server accepts (the emulated ``Request`` refuses the same others)."""

from jsemu.fetch_api import WORKERD_METHODS

__all__ = ["WORKERD_METHODS"]
