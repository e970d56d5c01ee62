"""PowerPoint (.pptx) decks made with python-pptx, as PowerPoint's own templates lay them out.

A slide is a dict: "title"; "bullets", [(level, text), …] in the content placeholder; "textbox",
free text in a text box; "alternate", a text box PowerPoint would write as markup-compatibility
alternate content (the same shape as the choice and as the fallback); "group", texts of text boxes inside one group shape; "table", rows of
cells; "picture", True for a picture (a small PNG) on the slide; "smartart", the texts of a SmartArt's boxes (its data part, as PowerPoint writes it, with
the document and transition points that hold no text); "notes", the speaker notes; "hidden", True to hide it from the slide show.
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
        if spec.get("picture"):
            slide.shapes.add_picture(_png(), Inches(1), Inches(1))
        if "smartart" in spec:
            _smartart(slide, spec["smartart"])
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


DIAGRAM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
DRAWING = "http://schemas.openxmlformats.org/drawingml/2006/main"


def _smartart(slide, texts: list[str]) -> None:
    """A SmartArt graphic frame and its data part. (PowerPoint also writes layout, style, colour and
    drawing parts, which the indexer does not read; the frame names only the data part here.)"""
    from lxml import etree
    from pptx.opc.constants import RELATIONSHIP_TYPE
    from pptx.opc.package import Part
    from pptx.opc.packuri import PackURI

    def point(model_id: str, kind: str | None, text: str) -> str:
        body = f'<a:r><a:rPr lang="en-US"/><a:t>{text}</a:t></a:r>' if text else '<a:endParaRPr lang="en-US"/>'
        kind_attribute = f' type="{kind}"' if kind else ""
        return (f'<dgm:pt modelId="{{{model_id}}}"{kind_attribute}><dgm:prSet/><dgm:spPr/>'
                f'<dgm:t><a:bodyPr/><a:lstStyle/><a:p>{body}</a:p></dgm:t></dgm:pt>')

    points = [point("0", "doc", "")]
    for i, text in enumerate(texts, 1):
        points += [point(f"{i}", None, text), point(f"{i}0", "parTrans", ""), point(f"{i}1", "sibTrans", "")]
    data = (f'<dgm:dataModel xmlns:dgm="{DIAGRAM}" xmlns:a="{DRAWING}"><dgm:ptLst>{"".join(points)}</dgm:ptLst>'
            f'<dgm:cxnLst/><dgm:bg/><dgm:whole/></dgm:dataModel>').encode()
    package = slide.part.package
    number = sum(1 for p in package.iter_parts() if str(p.partname).startswith("/ppt/diagrams/data")) + 1
    part = Part(PackURI(f"/ppt/diagrams/data{number}.xml"), "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
                package, data)
    rel_id = slide.part.relate_to(part, RELATIONSHIP_TYPE.DIAGRAM_DATA)
    frame = etree.fromstring(
        f'<p:graphicFrame xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="{DRAWING}" '
        f'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        f'<p:nvGraphicFramePr><p:cNvPr id="{90 + number}" name="Diagram {number}"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>'
        f'<p:xfrm><a:off x="914400" y="1828800"/><a:ext cx="7315200" cy="3657600"/></p:xfrm>'
        f'<a:graphic><a:graphicData uri="{DIAGRAM}"><dgm:relIds xmlns:dgm="{DIAGRAM}" r:dm="{rel_id}"/></a:graphicData></a:graphic>'
        f'</p:graphicFrame>')
    slide.shapes._spTree.append(frame)


def _png():
    import io

    from PIL import Image

    image = io.BytesIO()
    Image.new("RGB", (40, 30), "steelblue").save(image, "PNG")
    image.seek(0)
    return image
