"""Intake: the question's scope, what the question contains, and the planner's rules and state."""
