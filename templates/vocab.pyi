# The interface of `vocab.py`, which every package generates from its lanes' schemas
# (templates/vocab.py.j2): it lets mypy check the toolkit here as source, where no lane exists.
# The generated module narrows each name to the schema's values and the lanes' classes; mypy
# checks the toolkit against those too, in every generated package.
from typing import Any, TypeAlias

TurnStopReason: TypeAlias = str
ToolKind: TypeAlias = str
ToolCallStatus: TypeAlias = str
PlanEntryStatus: TypeAlias = str
PlanEntryPriority: TypeAlias = str
PermissionOptionKind: TypeAlias = str
ContentBlock: TypeAlias = Any
SessionUpdate: TypeAlias = Any
McpServer: TypeAlias = Any
PermissionOption: TypeAlias = Any
RequestPermissionRequest: TypeAlias = Any
ToolCallContent: TypeAlias = Any
ToolCallLocation: TypeAlias = Any
PlanEntry: TypeAlias = Any
SessionInfo: TypeAlias = Any
InitializeRequest: TypeAlias = Any
InitializeResponse: TypeAlias = Any
Implementation: TypeAlias = Any
Cost: TypeAlias = Any
