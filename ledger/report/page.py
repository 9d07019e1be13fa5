"""The page around a report: one self-contained HTML document with its CSS inline.

No script, no external stylesheet, font or image: the file can be mailed, archived and opened
offline, and a strict Content-Security-Policy (``default-src 'none'``) says so to the browser.
"""

from __future__ import annotations

from ledger.report.markup import Markup, el, esc

CSS = """
:root { --ink:#1d2430; --muted:#5b6577; --line:#d8dde6; --bad:#b3261e; --good:#1b7f3b;
        --paper:#fbfaf7; --red:#c0392b; --green:#2e8b57; --blue:#2c5aa0; --black:#1d2430; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink);
       background: var(--paper); margin: 0; padding: 24px 32px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left;
         vertical-align: top; }
th { background: #eef1f5; font-weight: 600; } td.num, th.num { text-align: right;
     font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.total td { font-weight: 700; border-top: 2px solid var(--ink); }
.badge { display: inline-block; padding: 2px 10px; border-radius: 10px; font-weight: 700;
         color: #fff; } .badge.ok { background: var(--good); color: #fff; }
.badge.bad { background: var(--bad); color: #fff; }
.ok { color: var(--good); } .bad { color: var(--bad); font-weight: 700; }
.rule { color: var(--muted); font-size: 12px; white-space: nowrap; }
.outcome { display: flex; flex-wrap: wrap; gap: 14px 28px; margin: 8px 0; }
.line { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.line .who { color: var(--muted); font-size: 12px; margin-bottom: 4px; }
.line .note { color: var(--bad); font-size: 12px; margin-top: 4px; }
.glyphs { display: flex; gap: 6px; align-items: center; }
.card { display: inline-flex; flex-direction: column; justify-content: space-between;
        width: 44px; height: 62px; border: 1px solid #9aa3b2; border-radius: 6px;
        background: #fff; padding: 3px 5px; font-weight: 700; font-size: 16px; }
.card .pip { align-self: flex-end; font-size: 22px; line-height: 1; }
.tone-red { color: var(--red); } .tone-black { color: var(--black); }
.tone-green { color: var(--green); } .tone-blue { color: var(--blue); }
.die { font-size: 40px; line-height: 1; }
.fpc { display: inline-flex; flex-direction: column; align-items: center; width: 76px;
       border: 2px solid currentColor; border-radius: 8px; background: #fff; padding: 3px; }
.fpc small { font-size: 11px; }
.tile { display: inline-flex; flex-direction: column; align-items: center; min-width: 34px;
        border: 1px solid #9aa3b2; border-radius: 4px; background: #fffdf3; padding: 1px 3px; }
.tile .face { font-size: 24px; font-weight: 700; line-height: 1.2; } .tile small { font-size: 10px; }
.wheel { display: inline-flex; align-items: center; justify-content: center; width: 46px;
         height: 46px; border-radius: 50%; color: #fff; font-size: 20px; font-weight: 700; }
.wheel.tone-red { background: var(--red); } .wheel.tone-black { background: var(--black); }
.wheel.tone-green { background: var(--green); }
ol.steps li { margin: 3px 0; } tr.irregular td { background: #fff4e5; }
.chart { background: #fff; border: 1px solid var(--line); margin: 8px 0; }
.chart .axis { stroke: var(--ink); stroke-width: 1; }
.chart text { font-size: 11px; fill: var(--ink); } .chart .tick { text-anchor: end; }
.chart .label { text-anchor: middle; } .chart .chart-title { font-weight: 700; font-size: 13px; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def page(title: str, body: Markup) -> str:
    """A complete HTML document."""
    head = el("head", Markup('<meta charset="utf-8">'),
              Markup(f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'),
              Markup('<meta name="viewport" content="width=device-width, initial-scale=1">'),
              el("title", title), el("style", Markup(CSS)))
    return "<!DOCTYPE html>\n" + el("html", head, el("body", body), lang="en") + "\n"
