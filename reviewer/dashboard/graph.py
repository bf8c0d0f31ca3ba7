"""Layout of a fact's neighbourhood as a server-drawn SVG: boxes in rows, arrows between them.

Pure geometry, no database: the memory selectors hand in versions and edges, the template
draws what this returns. Rows are distances from the fact's own versions (row 0): what rests
on it (DERIVED_FROM, QUALIFIES, SUPPORTS, CONTRADICTS pointing at it) below, what it rests on
above, so whatever went stale with it reads downwards.
"""

from __future__ import annotations

from dataclasses import dataclass

NODE_WIDTH = 208
NODE_HEIGHT = 46
COLUMN_GAP = 84
ROW_GAP = 64
MARGIN = 16


@dataclass(frozen=True)
class GraphNode:
    id: int
    row: int
    order: tuple[str, int]
    label: str
    detail: str
    status: str
    focus: bool
    full_label: str = ""


@dataclass(frozen=True)
class GraphEdge:
    source: int
    target: int
    edge_type: str


@dataclass(frozen=True)
class PlacedNode:
    node: GraphNode
    x: float
    y: float

    @property
    def text_x(self) -> float:
        return self.x + 8

    @property
    def cx(self) -> float:
        return self.x + NODE_WIDTH / 2

    @property
    def label_y(self) -> float:
        return self.y + 19

    @property
    def detail_y(self) -> float:
        return self.y + 37


@dataclass(frozen=True)
class PlacedEdge:
    source: GraphNode
    target: GraphNode
    edge_type: str
    x1: float
    y1: float
    x2: float
    y2: float
    path: str
    label_x: float
    label_y: float
    # Labels of edges within a row sit centred above the arrow; others beside the line.
    label_anchor: str = "start"


@dataclass(frozen=True)
class GraphLayout:
    width: float
    height: float
    nodes: list[PlacedNode]
    edges: list[PlacedEdge]
    node_width: int = NODE_WIDTH
    node_height: int = NODE_HEIGHT


def graph_layout(*, nodes: list[GraphNode], edges: list[GraphEdge]) -> GraphLayout:
    """Place nodes row by row (top row first), each row ordered by key and version."""
    rows = sorted({node.row for node in nodes})
    by_row = {row: sorted((n for n in nodes if n.row == row), key=lambda n: n.order) for row in rows}
    widest = max((len(members) for members in by_row.values()), default=1)
    width = MARGIN * 2 + widest * NODE_WIDTH + (widest - 1) * COLUMN_GAP
    placed: dict[int, PlacedNode] = {}
    for index, row in enumerate(rows):
        members = by_row[row]
        row_width = len(members) * NODE_WIDTH + (len(members) - 1) * COLUMN_GAP
        left = (width - row_width) / 2
        y = MARGIN + index * (NODE_HEIGHT + ROW_GAP)
        for column, node in enumerate(members):
            placed[node.id] = PlacedNode(node=node, x=left + column * (NODE_WIDTH + COLUMN_GAP), y=y)
    height = MARGIN * 2 + len(rows) * NODE_HEIGHT + max(len(rows) - 1, 0) * ROW_GAP
    return GraphLayout(
        width=width,
        height=height,
        nodes=list(placed.values()),
        edges=[
            _edge(placed[e.source], placed[e.target], e.edge_type)
            for e in edges
            if e.source in placed and e.target in placed
        ],
    )


def _edge(source: PlacedNode, target: PlacedNode, edge_type: str) -> PlacedEdge:
    """An arrow from the source box to the target box: side to side within a row, else
    bottom/top edge to top/bottom edge, bowed within a row so that it clears the boxes between."""
    if source.y == target.y:
        rightwards = target.x > source.x
        x1 = source.x + (NODE_WIDTH if rightwards else 0)
        x2 = target.x + (0 if rightwards else NODE_WIDTH)
        y1 = y2 = source.y + NODE_HEIGHT / 2
        adjacent = abs(target.x - source.x) <= NODE_WIDTH + COLUMN_GAP
        bow = 0 if adjacent else -(NODE_HEIGHT / 2 + 18)
        mid_x, mid_y = (x1 + x2) / 2, y1 + bow
        path = f"M {x1:.1f} {y1:.1f} Q {mid_x:.1f} {mid_y + bow:.1f} {x2:.1f} {y2:.1f}"
        return PlacedEdge(
            source.node, target.node, edge_type, x1, y1, x2, y2, path, mid_x, mid_y - 6, "middle"
        )
    downwards = target.y > source.y
    x1, x2 = source.cx, target.cx
    y1 = source.y + (NODE_HEIGHT if downwards else 0)
    y2 = target.y + (0 if downwards else NODE_HEIGHT)
    path = f"M {x1:.1f} {y1:.1f} L {x2:.1f} {y2:.1f}"
    return PlacedEdge(
        source.node, target.node, edge_type, x1, y1, x2, y2, path, (x1 + x2) / 2 + 4, (y1 + y2) / 2
    )
