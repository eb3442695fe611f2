"""`acp-codegen diff`: a structural, direction-aware comparison of two ACP schema versions.

`load` reads the inputs, `reach` finds who sends each type, `compare` (with `unions`,
`shapes`, `match`) lists the changes, `rules` judges them, `report` prints them.
"""
