"""The jinja2 environment of the pages drawn on a server or for a browser (the history page, the
hub's pages): every value escaped (autoescape) and every control character shown as an escape,
so no text from a run can run in a reader's browser or drive a terminal that prints the page;
markup drawn on purpose (an SVG) passes as it is."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, select_autoescape

from scope.views.fmt import safe


def shown(v):
    if hasattr(v, "__html__"):  # drawn here and marked safe on purpose
        return v
    return safe(v) if isinstance(v, str) else ("" if v is None else v)


def environment(package: str) -> Environment:
    return Environment(
        loader=PackageLoader(package, "templates"), autoescape=select_autoescape(default=True), finalize=shown
    )
