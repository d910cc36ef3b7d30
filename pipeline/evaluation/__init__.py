"""Evaluation: labelled examples, label resolution, metrics, scoring, tables, history and labelling."""
