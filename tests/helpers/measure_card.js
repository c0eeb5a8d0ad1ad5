(conversation) => {
  // One conversation (or a card shown alone) as a person sees it: the left edge of
  // every input it asks for (the form's top-level inputs, the "Answering as" field, the
  // override box) and every element drawn outside the frames (the elements that draw a
  // visible border: the conversation's, a card's).
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden') return false;
    }
    return true;
  };
  const origin = conversation.getBoundingClientRect();
  const x = (r) => Math.round((r.left - origin.left) * 10) / 10;
  const framed = (el) => {
    const cs = getComputedStyle(el);
    return parseFloat(cs.borderTopWidth) > 0 && cs.borderTopStyle !== 'none'
      && parseFloat(cs.borderLeftWidth) > 0;
  };
  const frames = [conversation, ...conversation.querySelectorAll('.hitl-card')]
    .filter((f) => shown(f) && framed(f));
  const nested = (el, form) => {
    for (let e = el.parentElement; e && e !== form; e = e.parentElement)
      if ((e.classList.contains('hitl-body') && !e.classList.contains('hitl-headless'))
          || e.classList.contains('hitl-items')) return true;
    return false;
  };
  const inputs = [];
  for (const form of conversation.querySelectorAll('.hitl-form')) {
    for (const w of form.querySelectorAll('.hitl-input, .hitl-variant')) {
      if (!shown(w) || nested(w, form)) continue;
      const control = [...w.children].find((c) => !c.classList.contains('widget-label') && shown(c));
      if (control) inputs.push({what: [...w.classList].find((c) => c.startsWith('hitl-field-')),
                                left: x(control.getBoundingClientRect())});
    }
  }
  for (const w of conversation.querySelectorAll('.hitl-columns')) {
    const input = w.querySelector('input');
    if (shown(w) && input) inputs.push({what: 'answering as', left: x(input.getBoundingClientRect())});
  }
  for (const w of conversation.querySelectorAll('.hitl-responder-override')) {
    const box = w.querySelector('input');
    if (shown(w) && box) inputs.push({what: 'send anyway', left: x(box.getBoundingClientRect())});
  }
  const notes = [];
  for (const w of conversation.querySelectorAll('.hitl-responder-note')) {
    const text = w.querySelector('.widget-html-content > div');
    if (shown(w) && text) notes.push({what: text.textContent.trim().slice(0, 40),
                                      left: x(text.getBoundingClientRect())});
  }
  const outside = [];
  for (const el of conversation.querySelectorAll('*')) {
    if (!shown(el) || el.tagName === 'STYLE') continue;
    const r = el.getBoundingClientRect();
    const inside = frames.some((f) => {
      const fr = f.getBoundingClientRect();
      return r.left >= fr.left - 0.5 && r.right <= fr.right + 0.5
        && r.top >= fr.top - 0.5 && r.bottom <= fr.bottom + 0.5;
    });
    if (!inside) outside.push(((typeof el.className === 'string' && el.className) || el.tagName).slice(-60)
                              + ': ' + (el.textContent || '').trim().slice(0, 40));
  }
  return {frames: frames.length, inputs, notes, outside};
}
