"""mkdocs hook: the course's executed notebooks (``notebooks/*.ipynb``) as pages of the site.

Each notebook is copied, without its saved widget state, to ``.cache/docs-notebooks/``
and handed to mkdocs-jupyter, which renders the saved outputs (nothing is executed). With
no widget state, a graph widget's output shows its static ``image/svg+xml`` drawing rather
than a widget no page can run. The notebooks are listed in the nav, in file order, under
"The course, executed", so a new notebook needs no edit here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

SECTION = "The course, executed"


def _notebooks(config) -> list[Path]:
    root = Path(config.config_file_path).resolve().parent
    return sorted((root / "notebooks").glob("*.ipynb"))


def on_config(config):
    pages = [f"notebooks/{p.name}" for p in _notebooks(config)]
    if pages and config.nav is not None:
        config.nav.append({SECTION: pages})
    return config


@event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files, config):
    root = Path(config.config_file_path).resolve().parent
    out = root / ".cache" / "docs-notebooks"
    (out / "notebooks").mkdir(parents=True, exist_ok=True)
    for path in _notebooks(config):
        nb = json.loads(path.read_text(encoding="utf-8"))
        nb.get("metadata", {}).pop("widgets", None)
        for cell in nb.get("cells", []):  # a link to ../docs/X.md is the site's page X/
            if cell.get("cell_type") == "markdown":
                text = "".join(cell["source"])
                cell["source"] = re.sub(r"\]\(\.\./docs/((?:[^)#\s]*/)?)(?:index|([^)#\s/]+))\.md",
                                        lambda m: f"](../../{m[1]}{m[2] + '/' if m[2] else ''}", text)
        copy = out / "notebooks" / path.name
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        if not copy.exists() or copy.read_text(encoding="utf-8") != text:
            copy.write_text(text, encoding="utf-8")
        files.append(File(f"notebooks/{path.name}", str(out), config.site_dir,
                          config.use_directory_urls))
    return files
