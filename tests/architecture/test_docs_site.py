"""The manual builds as a site (MkDocs, Material theme) with --strict, and the README's links land.

docs/mkdocs.yml raises to warnings what MkDocs 1.6 only logs by default (a page left out of the nav, a
link to a heading that does not exist), so --strict fails on each of them: a test breaks a copy of the
docs each of these ways and finds the build refused with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# Material prints a notice about its own future on every build (on stderr, not as a warning, so
# --strict ignores it); without it the output is MkDocs' own.
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(docs: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(docs / "mkdocs.yml"), "-d", str(site)],
        capture_output=True, text=True, timeout=120, env=ENV,
    )  # fmt: skip


def block(text: str, marker: str) -> str:
    return text.split(f"<!-- {marker} -->\n```sh\n", 1)[1].split("\n```", 1)[0]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    result = build(DOCS, out)
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    return out


def test_every_page_of_the_manual_is_built(site):
    pages = sorted(p.stem for p in (DOCS / "manual").glob("*.md"))
    assert "architecture" in pages and "sdk" in pages
    built = sorted("index" if p.parent == site else p.parent.name for p in site.glob("**/index.html"))
    assert built == pages


def test_a_broken_link_a_broken_anchor_and_a_page_left_out_of_the_nav_each_fail_the_build(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("site"))
    with (docs / "manual" / "reads.md").open("a") as page:
        page.write("\n[gone](no-such-page.md) and [nowhere](sdk.md#no-such-heading)\n")
    (docs / "manual" / "stray.md").write_text("# Stray\n\nA page no one put in the nav.\n")
    result = build(docs, tmp_path / "site")
    assert result.returncode != 0
    assert re.search(r"WARNING .*reads\.md.*'no-such-page\.md'", result.stderr), result.stderr
    assert re.search(r"WARNING .*reads\.md.*'sdk\.md#no-such-heading'", result.stderr), result.stderr
    assert re.search(r"WARNING .*not included in the \"nav\".*\n.*stray\.md", result.stderr), result.stderr


def test_the_readme_fits_on_a_few_screens_and_its_links_land(site):
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert "docs/manual/sdk.md" in local
    for link in local:
        path, _, anchor = link.partition("#")
        if not path:  # a heading of the README itself
            slugs = {re.sub(r"[^\w -]", "", h.lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}
            assert anchor in slugs, link
            continue
        assert (ROOT / path).exists(), link
        if anchor:  # a heading of a manual page: the id the site gave it
            page = Path(path).relative_to("docs/manual").with_suffix("")
            html = site / ("" if page.name == "index" else page) / "index.html"
            assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), link


def test_the_getting_started_page_gives_the_readmes_commands():
    readme = README.read_text(encoding="utf-8")
    index = (DOCS / "manual" / "index.md").read_text(encoding="utf-8")
    for marker in ("main-command", "test-command"):
        assert f"```sh\n{block(readme, marker)}\n```" in index, marker
