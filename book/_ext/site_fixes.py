"""Sphinx extension: fixes to the built pages that a reader's browser would otherwise report.

Jupyter Book 1.x registers sphinx-thebe's inline configuration script twice, and the
second copy throws "Identifier 'THEBE_JS_URL' has already been declared" on every page.
This drops repeated inline scripts from each page's context before it is rendered.
"""


def _drop_repeated_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        # Same file and attributes (an inline script's text is its "body"; its file is None or "").
        key = (getattr(script, "filename", str(script)) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(script)
    context["script_files"] = kept


def setup(app):
    # Early: html-page-context stops at the first handler that returns a template name.
    app.connect("html-page-context", _drop_repeated_scripts, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
