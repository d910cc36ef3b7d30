"""Answering: what each sub-question asks for, the sentences it may be answered from, the floors that answer
it without an LM, computed figures, and the evidence an answer line rests on."""
