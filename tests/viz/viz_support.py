"""Helpers for the picture tests: parse an SVG and count its elements by class."""

import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"


def parse(svg_text: str) -> ET.Element:
    """The root of ``svg_text``; fails the test when it is not well-formed XML."""
    root = ET.fromstring(svg_text)
    assert root.tag == f"{SVG_NS}svg"
    return root


def with_class(root: ET.Element, *classes: str) -> list[ET.Element]:
    """The elements whose class attribute holds every one of ``classes``."""
    return [e for e in root.iter() if set(classes) <= set((e.get("class") or "").split())]
