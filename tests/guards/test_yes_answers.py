"""The check of a "yes" (pipeline.guards.yes_answers): a yes stands only on a statement holding the event's verb and
object, without a negation, an absence, a condition or a mere possibility the question lacks. One test per branch."""

from __future__ import annotations

import pytest

from pipeline.guards.yes_answers import asked_event, yes_refused

SUBLET = "Not sublet, assign or part with possession without the Landlord's written consent."
TERMINATION = (
    "6. Termination 6.1 After the first year, either party may end this lease by giving 3 months' written notice."
)


@pytest.mark.parametrize(
    ("question", "verb", "thing"),
    [
        ("Does the landlord pay the county rates?", "pay", "rate"),
        ("Does the tenant pay for electricity?", "pay", "electr"),
        ("Is the tenant allowed to sublet the premises?", "sublet", "premis"),
        ("Is subletting allowed?", "sublet", None),  # the subject is the act asked about
        ("Were dividends declared?", "declar", "dividend"),  # passive: the subject is the object
        ("Were there any share buybacks during the quarter?", None, "buyback"),  # a thing, no verb
        ("Did Acme Widgets declare any dividends on its common stock?", "declar", "dividend"),
        ("Has the board of directors approved a buyback?", "approv", "buyback"),
    ],
)
def test_the_event_is_the_verb_and_the_head_of_its_object(question: str, verb: str | None, thing: str | None) -> None:
    event = asked_event(question)
    assert (event.verb, event.object) == (verb, thing)


@pytest.mark.parametrize(
    ("question", "statement"),
    [
        ("Does the landlord pay the county rates?", "3.2 The Landlord pays land rent, county rates and insurance."),
        ("Has the company paid a dividend?", "The Company paid dividends of $0.50 per share."),  # "paid" for "pay"
        ("Were there any share buybacks during the quarter?", "The Company repurchased 1.2 million shares."),
        ("Can the tenant sublet the premises?", "The Tenant may sublet the Premises."),  # may answers can
        ("Is the deposit not refundable?", "The deposit is not refunded."),  # the question's own negation
        ("Can the lease end without notice?", "Either party may end the lease without notice."),
        ("Is rent payable if the premises are damaged?", "If the premises are damaged, rent is payable in part."),
        # a condition far from the event is about something else; "audit or inspection rights" are rights
        (
            "Does this agreement grant any exclusive rights?",
            "In the event that the Buyer fails to secure purchases amounting to the Minimum Order for any period, the "
            "exclusive supplier rights granted under Article 2 shall become non-exclusive.",
        ),
        ("Are there audit or inspection rights in this agreement?", "AbbVie shall have the right to inspect records."),
    ],
)
def test_a_yes_stands_on_a_statement_of_the_event(question: str, statement: str) -> None:
    assert yes_refused(question, statement) is None


@pytest.mark.parametrize(
    ("question", "statement", "why"),
    [
        # the probe's: "quiet enjoyment" for subletting, a notice clause for "without notice"
        (
            "Is the tenant allowed to sublet the premises?",
            "Allow the Tenant quiet enjoyment of the Premises during the term.",
            "does not hold the event's verb (sublet)",
        ),
        ("Can the landlord terminate the lease without notice?", TERMINATION, "without notic"),
        ("Does the landlord insure the roof?", "The Landlord insures the buildings.", "event's object (roof)"),
        ("Is subletting allowed?", SUBLET, "negates the event (sublet)"),
        ("Does the deposit bear interest?", "The deposit bears no interest.", "negates the event (interest)"),
        ("Did the company repurchase shares?", "The Company may repurchase shares.", "only that it may happen"),
        (
            "Does the tenant pay for electricity?",
            "The Tenant pays for electricity if the meter is separate.",
            "conditional (if)",
        ),
    ],
)
def test_a_yes_does_not_stand_on_a_statement_that_does_not_state_it(question: str, statement: str, why: str) -> None:
    refusal = yes_refused(question, statement)
    assert refusal is not None and why in refusal, refusal


def test_a_question_read_no_other_way_is_checked_for_negations_and_conditions_only() -> None:
    assert asked_event("Subletting: allowed?").verb is None
    assert yes_refused("Subletting: allowed?", "Subletting is allowed.") is None
    assert yes_refused("Subletting: allowed?", "Subletting is allowed unless the Landlord objects.") is not None
