"""How a table names what a value is: a caption in brackets after it. The store writes table lines so
(`pipeline.store.tables`) and the answer step reads them back (`pipeline.answering.name_lists`); the pattern
lives here so that neither imports the other's package."""

# A caption printed in brackets under a form's field ("(State or other jurisdiction of incorporation)"), one level
# of brackets inside it allowed ("(Trading Symbol(s))"); the store's table lines give each value its caption so.
CAPTION = r"\((?:[^()]|\([^()]*\))+\)"
