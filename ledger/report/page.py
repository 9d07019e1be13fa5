"""The page around a report: one self-contained HTML document with its CSS inline.

No script, no external stylesheet, font or image: the file can be mailed, archived and opened
offline, and a strict Content-Security-Policy (``default-src 'none'``) says so to the browser.
"""

from __future__ import annotations

from ledger.report.markup import Markup, el, esc

CSS = """
:root { --ink:#1d2430; --muted:#5b6577; --line:#d8dde6; --bad:#b3261e; --bad-bg:#fde7e4;
        --good:#1b7f3b; --info:#1f5f99; --info-bg:#e6f0fa; --paper:#fbfaf7; --red:#c0392b;
        --green:#2e8b57; --blue:#2c5aa0; --black:#1d2430; --warn:#8a5a00; --warn-bg:#fdf1d8; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink);
       background: var(--paper); margin: 0; padding: 24px 32px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 12px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left;
         vertical-align: top; }
th { background: #eef1f5; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td code { overflow-wrap: anywhere; } td.at, td.nowrap, td > code.code { white-space: nowrap; }
table.money { width: auto; min-width: 60%; }
tr.total td { font-weight: 700; border-top: 2px solid var(--ink); }
.scroll { overflow-x: auto; }
.badges { display: flex; gap: 8px; flex-wrap: wrap; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 10px; font-weight: 700;
         color: #fff; white-space: nowrap; }
.badge.ok { background: var(--good); color: #fff; }
.badge.bad { background: var(--bad); color: #fff; }
.badge.info { background: var(--info); color: #fff; }
.ok { color: var(--good); } .bad { color: var(--bad); font-weight: 700; }
.info-text { color: var(--info); font-size: 12px; }
.pct { color: var(--muted); }
.rule { color: var(--muted); font-size: 12px; }
.glances { display: flex; flex-wrap: wrap; gap: 12px; }
.glance { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px;
          min-width: 420px; }
.glance .cur { font-weight: 700; color: var(--muted); margin-bottom: 4px; }
.glance dl { display: grid; grid-template-columns: repeat(3, auto); gap: 6px 22px; margin: 0; }
.glance dt { color: var(--muted); font-size: 12px; } .glance dd { margin: 0; font-size: 17px;
             font-weight: 700; font-variant-numeric: tabular-nums; white-space: nowrap; }
.glance dd .pct { font-size: 13px; font-weight: 400; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; } figure.chart-box { margin: 0; }
.chart { background: #fff; border: 1px solid var(--line); display: block; max-width: 100%;
         height: auto; }
.chart .axis { stroke: var(--ink); stroke-width: 1; }
.chart .grid { stroke: #e3e7ee; stroke-width: 1; }
.chart text { font-size: 11px; fill: var(--ink); } .chart .tick { text-anchor: end;
              fill: var(--muted); }
.chart .label { text-anchor: middle; } .chart .chart-title { font-weight: 700; font-size: 13px; }
.sev { display: inline-block; padding: 0 7px; border-radius: 8px; font-size: 12px;
       font-weight: 700; white-space: nowrap; }
.sev.error { background: var(--bad-bg); color: var(--bad); }
.sev.info { background: var(--info-bg); color: var(--info); }
.sev.warning { background: var(--warn-bg); color: var(--warn); }
tr.sev-error td:first-child { box-shadow: inset 3px 0 0 var(--bad); }
tr.sev-info td:first-child { box-shadow: inset 3px 0 0 var(--info); }
tr.sev-warning td:first-child { box-shadow: inset 3px 0 0 var(--warn); }
tr.sev-info td { color: #33475e; }
td.meaning { color: var(--muted); font-size: 12px; }
.count { display: inline-block; min-width: 34px; padding: 0 6px; border-radius: 8px;
         text-align: center; font-weight: 700; color: #fff; font-variant-numeric: tabular-nums; }
.count.error { background: var(--bad); } .count.info { background: var(--info); }
.count.warning { background: var(--warn); }
.folded { margin-top: 12px; }
details { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 6px 0;
          padding: 4px 10px; }
details details { margin: 6px 0 6px 12px; }
summary { cursor: pointer; padding: 3px 0; }
table.counts { margin-bottom: 4px; }
.outcome { display: flex; flex-wrap: wrap; gap: 14px 28px; margin: 8px 0; }
.line { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.line .who { color: var(--muted); font-size: 12px; margin-bottom: 4px; }
.line .note { color: var(--bad); font-size: 12px; margin-top: 4px; }
.glyphs { display: flex; gap: 6px; align-items: center; }
.card { display: inline-flex; flex-direction: column; justify-content: space-between;
        min-width: 44px; height: 62px; border: 1px solid #9aa3b2; border-radius: 6px;
        background: #fff; padding: 3px 5px; font-weight: 700; font-size: 16px; }
.card .pip { align-self: flex-end; font-size: 22px; line-height: 1; }
.tone-red { color: var(--red); } .tone-black { color: var(--black); }
.tone-green { color: var(--green); } .tone-blue { color: var(--blue); }
.die { font-size: 40px; line-height: 1.15; }
.fpc { display: inline-flex; flex-direction: column; align-items: center; min-width: 76px;
       border: 2px solid currentColor; border-radius: 8px; background: #fff; padding: 3px; }
.fpc small { font-size: 11px; white-space: nowrap; }
.tile { display: inline-flex; flex-direction: column; align-items: center; min-width: 34px;
        border: 1px solid #9aa3b2; border-radius: 4px; background: #fffdf3; padding: 1px 3px; }
.tile .face { font-size: 24px; font-weight: 700; line-height: 1.2; } .tile small { font-size: 10px; }
.wheel { display: inline-flex; align-items: center; justify-content: center; width: 46px;
         height: 46px; border-radius: 50%; color: #fff; font-size: 20px; font-weight: 700; }
.wheel.tone-red { background: var(--red); } .wheel.tone-black { background: var(--black); }
.wheel.tone-green { background: var(--green); }
.settlement { display: flex; flex-wrap: wrap; gap: 2px 8px; }
.fld { white-space: nowrap; font-variant-numeric: tabular-nums; }
.fld i { font-style: normal; color: var(--muted); font-size: 12px; }
.fld.diff { background: var(--bad-bg); color: var(--bad); font-weight: 700; border-radius: 3px;
            padding: 0 3px; outline: 1px solid var(--bad); }
.fld.want { text-decoration: underline; text-decoration-color: var(--good); font-weight: 700; }
td.diff { background: var(--bad-bg); color: var(--bad); font-weight: 700; }
td.want { font-weight: 700; color: var(--good); }
td.side { color: var(--muted); font-size: 12px; }
tr.derived-row td.num, tr.derived-row td.side { border-bottom: 0; }
td.why { min-width: 220px; }
ol.steps li { margin: 3px 0; } tr.irregular td { background: #fff4e5; }
footer { margin-top: 32px; padding-top: 8px; border-top: 1px solid var(--line);
         color: var(--muted); font-size: 12px; }
footer div { margin: 2px 0; } footer b { color: var(--ink); font-weight: 600; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
code.digest { overflow-wrap: anywhere; }
@page { size: A4; margin: 12mm 10mm; }
@media print {
  body { background: #fff; padding: 0; font-size: 10px; line-height: 1.3; }
  h1 { font-size: 17px; } h2 { font-size: 13px; margin: 14px 0 5px; break-after: avoid; }
  th, td { padding: 1px 4px; } .rule, code, td.side, .fld i { font-size: 8.5px; }
  td.why { min-width: 0; } .settlement { gap: 0 5px; } .sub { margin-bottom: 6px; }
  .outcome { gap: 6px 12px; } .line { padding: 4px 8px; } footer { margin-top: 12px; font-size: 8.5px; }
  .keep, table.bets, table.money, table.counts, .glance, figure, .line { break-inside: avoid; }
  tr, .fld, summary { break-inside: avoid; } thead { display: table-header-group; }
  details { border: 0; padding: 0; } summary { list-style: none; font-weight: 700; }
  details::details-content { content-visibility: visible; display: contents; }
  .glance { min-width: 0; } .scroll { overflow: visible; }
  .card { height: 46px; min-width: 34px; font-size: 13px; } .card .pip { font-size: 16px; }
  .die { font-size: 28px; } .wheel { width: 34px; height: 34px; font-size: 15px; }
  .chart { max-width: 100%; height: auto; }
  a { color: inherit; text-decoration: none; }
}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def page(title: str, body: Markup) -> str:
    """A complete HTML document."""
    head = el(
        "head",
        Markup('<meta charset="utf-8">'),
        Markup(f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'),
        Markup('<meta name="viewport" content="width=device-width, initial-scale=1">'),
        el("title", title),
        el("style", Markup(CSS)),
    )
    return "<!DOCTYPE html>\n" + el("html", head, el("body", body), lang="en") + "\n"
