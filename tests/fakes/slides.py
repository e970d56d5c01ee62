"""PowerPoint (.pptx) decks made with python-pptx, as PowerPoint's own templates lay them out.

A slide is a dict: "title"; "bullets", [(level, text), …] in the content placeholder; "textbox",
free text in a text box; "alternate", a text box PowerPoint would write as markup-compatibility
alternate content (the same shape as the choice and as the fallback); "group", texts of text boxes inside one group shape; "table", rows of
cells; "notes", the speaker notes; "hidden", True to hide it from the slide show.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

TITLE_AND_CONTENT, TITLE_ONLY, BLANK = 1, 5, 6  # the default template's layouts


def make_pptx(path: Path, slides: list[dict], title: str | None = None, author: str | None = None,
              keywords: str | None = None, modified: datetime | None = None) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for spec in slides:
        layout = TITLE_AND_CONTENT if "bullets" in spec else TITLE_ONLY if "title" in spec else BLANK
        slide = deck.slides.add_slide(deck.slide_layouts[layout])
        if "title" in spec:
            slide.shapes.title.text = spec["title"]
        if "bullets" in spec:
            frame = slide.placeholders[1].text_frame
            for i, (level, text) in enumerate(spec["bullets"]):
                paragraph = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
                paragraph.text, paragraph.level = text, level
        if "textbox" in spec:
            slide.shapes.add_textbox(Inches(1), Inches(5), Inches(8), Inches(1)).text_frame.text = spec["textbox"]
        if "alternate" in spec:  # as PowerPoint writes newer content: a choice for readers that know it, a fallback for the others
            _alternate(slide.shapes.add_textbox(Inches(1), Inches(6), Inches(8), Inches(1)), spec["alternate"])
        if "group" in spec:
            group = slide.shapes.add_group_shape()
            for i, text in enumerate(spec["group"]):
                group.shapes.add_textbox(Inches(1 + 3 * i), Inches(2), Inches(2), Inches(1)).text_frame.text = text
        if "table" in spec:
            rows = spec["table"]
            table = slide.shapes.add_table(len(rows), len(rows[0]), Inches(1), Inches(2), Inches(8), Inches(2)).table
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
        if "notes" in spec:
            slide.notes_slide.notes_text_frame.text = spec["notes"]
        if spec.get("hidden"):
            slide._element.set("show", "0")  # what PowerPoint's "Hide Slide" writes; python-pptx has no call for it
    properties = deck.core_properties
    properties.title = title or ""
    properties.author = author or ""
    properties.keywords = keywords or ""
    if modified is not None:
        properties.modified = modified
    deck.save(str(path))


def _alternate(shape, text: str) -> None:
    from copy import deepcopy

    from lxml import etree

    mc = "http://schemas.openxmlformats.org/markup-compatibility/2006"
    shape.text_frame.text = text
    element = shape._element
    wrapper = etree.Element(f"{{{mc}}}AlternateContent", nsmap={"mc": mc})
    element.addprevious(wrapper)
    choice = etree.SubElement(wrapper, f"{{{mc}}}Choice", Requires="p14")
    fallback = etree.SubElement(wrapper, f"{{{mc}}}Fallback")
    fallback.append(deepcopy(element))
    choice.append(element)
