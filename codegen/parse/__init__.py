"""JSON Schema → IR: the only code that knows JSON Schema keywords."""
