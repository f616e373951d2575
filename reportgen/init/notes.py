"""The notes `reportgen init` prints beside the starter spec: what was read, what each guess is and why, and
what to check."""

from __future__ import annotations

from reportgen.init.sample import cell_text
from reportgen.init.guess import MIN_GROUP_ROWS, AttributeGuess
from reportgen.init.label_free import task_notes
from reportgen.init.roles import Guess
from reportgen.init.sections import predicted_attribute_metrics


def starter_notes(guess: Guess) -> list[str]:
    table, task, opts = guess.table, guess.task, guess.opts
    notes = [f"read {table.n_rows:,} rows{' (the first ones)' if table.truncated else ''} and "
             f"{len(table.columns)} columns of {table.shown}"
             + (f" (its first part, {table.sample_from.name})" if table.sample_from != table.path else "")]
    if guess.no_label:
        notes += task_notes(task)
    elif isinstance(task.label, list):
        form = f"columns: {task.pattern!r}" if task.pattern else f"columns: [{', '.join(task.label)}]"
        notes.append(f"task {task.name}: {task.why} ({form}, predicted: {task.predicted!r}, positive 1)")
    else:
        notes.append(f"label: {task.label} (positive value {cell_text(task.positive)}): {task.why}")
        if task.predicted:
            alt = f"; the score {task.alt_score} is offered in a comment" if task.alt_score else ""
            notes.append(f"prediction: {task.predicted} (two values, all of them label values){alt}")
        else:
            notes.append(f"prediction: {'given as' if guess.score_given else 'none found;'} score {task.score} "
                         f"with threshold {task.threshold:g}"
                         + (" (or `calibrate` with data.validation)" if opts.threshold is None else ""))
    if opts.favorable is not None:
        notes.append(f"favorable: {task.favorable} (given with --favorable)")
    else:
        notes.append(f"favorable: {task.favorable} — "
                     + ("the label names an unfavourable outcome (e.g. reoffending, toxicity, default)"
                        if task.favorable == "negative"
                        else "the default; a positive prediction is taken as favourable")
                     + "; check, or pass --favorable")
    notes += [_attribute_note(a) for a in guess.attrs]
    if guess.suggestions:
        notes.append("commented-out attribute suggestions: " + ", ".join(c.name for c in guess.suggestions))
    if guess.with_missing:
        notes.append(f"missing values in {', '.join(guess.with_missing)}: data.missing: drop")
    if not guess.no_label:
        notes.append("base: test (only the test file is given; base.source would default to train, which needs "
                     "data.train); with a training file, add data.train and base.source: train (preferred)")
    if guess.with_predicted and not guess.no_label:  # a label-free spec lists none of those metrics
        notes.append(" and ".join(predicted_attribute_metrics()) + " added: "
                     + ", ".join(a.column.name for a in guess.with_predicted) + " has a predicted attribute")
    return notes


def _attribute_note(a: AttributeGuess) -> str:
    how = ("given with --attribute" if a.guessed_by_name is None else "named like a protected attribute"
           if a.guessed_by_name else "NOT named like one: the only low-cardinality text column; check")
    note = (f"attribute {a.column.name} ({how}): groups {', '.join(cell_text(g) for g in a.groups)} by frequency; "
            f"reference {cell_text(a.groups[0])}")
    if a.left_out:
        note += (f"; left out (fewer than {MIN_GROUP_ROWS} rows, their rows are dropped): "
                 + ", ".join(f"{cell_text(v)} ({n})" for v, n in a.left_out))
    if a.unknown:
        note += ("; unknown: " + ", ".join(repr(cell_text(v)) for v in a.unknown)
                 + " (counted apart, not a group; check)")
    if a.predicted:
        note += f"; predicted: {a.predicted}"
    return note
