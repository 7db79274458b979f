"""Item pipelines, one concern each: validate → normalize → skills → store (``ITEM_PIPELINES`` in
crawler/settings.py). Each passes items it does not handle through unchanged and reads fields through ItemAdapter.
"""

from crawler.files import quote_name


def item_where(adapter) -> str:
    """Where an item came from, for a one-line message: ``locator#position``, or the locator alone
    (quoted when it holds a newline or another character that is not printable)."""
    position = adapter.get("position")
    return quote_name(f"{adapter.get('locator')}") + ("" if position is None else f"#{position}")
