(form) => {
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    for (let e = el; e && e !== document.body; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden') return false;
    }
    return true;
  };
  const rgba = (text) => {
    const m = text.match(/rgba?\(([^)]+)\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(',').map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let out = [255, 255, 255];
    for (const c of layers.reverse()) out = out.map((v, i) => c[i] * c[3] + v * (1 - c[3]));
    return out;
  };
  // The colour drawn where ``start`` (a colour painted by ``el``) lies: composited over
  // the background of el and each ancestor, each element's opacity applied to all it
  // paints (a disabled input's opacity 0.6 pales its text and its background alike).
  const over = (t, b) => {
    const a = t[3] + b[3] * (1 - t[3]);
    if (a === 0) return [0, 0, 0, 0];
    return [0, 1, 2].map((i) => (t[i] * t[3] + b[i] * b[3] * (1 - t[3])) / a).concat([a]);
  };
  const drawn = (el, start) => {
    let c = start;
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      c = over(c, rgba(cs.backgroundColor));
      c = [c[0], c[1], c[2], c[3] * Number(cs.opacity)];
    }
    return over(c, [255, 255, 255, 1]).slice(0, 3);
  };
  const ratio = (x, y) => {
    const [a, b] = [lum(x), lum(y)];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  };
  const fr = form.getBoundingClientRect();
  const level = (el) => {
    let n = 0;
    for (let e = el.parentElement; e && e !== form; e = e.parentElement)
      if ((e.classList.contains('hitl-body') && !e.classList.contains('hitl-headless'))
          || e.classList.contains('hitl-items')) n += 1;
    return n;
  };
  const edges = {};
  for (const w of form.querySelectorAll('.hitl-input, .hitl-variant')) {
    if (!shown(w)) continue;
    const control = [...w.children].find((c) => !c.classList.contains('widget-label') && shown(c));
    if (!control) continue;
    const kind = [...w.classList].find((c) => c.startsWith('hitl-kind-')) || '';
    const key = level(w);
    (edges[key] = edges[key] || []).push({
      left: control.getBoundingClientRect().left - fr.left, kind,
      field: [...w.classList].find((c) => c.startsWith('hitl-field-')) || '',
    });
  }
  const overflow = [];
  for (const el of form.querySelectorAll('*')) {
    if (!shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > fr.right + 1 || r.left < fr.left - 1)
      overflow.push((el.className && el.className.baseVal === undefined ? el.className : el.tagName) + ' ' + Math.round(r.left - fr.left) + '..' + Math.round(r.right - fr.left));
  }
  const clipped = [];
  for (const el of form.querySelectorAll('input, select, textarea, button')) {
    if (!shown(el) || el.type === 'checkbox' || el.type === 'radio') continue;
    const r = el.getBoundingClientRect();
    const name = el.tagName + ' ' + (el.textContent || el.value || el.placeholder || '').trim().slice(0, 30);
    if (el.tagName === 'BUTTON' && el.scrollWidth > el.clientWidth + 1) clipped.push('cut text: ' + name);
    if (el.tagName !== 'BUTTON' && r.width < 100) clipped.push('narrow ' + Math.round(r.width) + 'px: ' + name);
    for (let e = el.parentElement; e && e !== form.parentElement; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const p = e.getBoundingClientRect();
        if (r.left < p.left - 1 || r.right > p.right + 1 || r.bottom > p.bottom + 1) { clipped.push('clipped: ' + name); break; }
      }
    }
  }
  const errors = [];
  for (const el of form.querySelectorAll('.hitl-error, .hitl-summary-head')) {
    if (!shown(el)) continue;
    const fg = rgba(getComputedStyle(el).color);
    const bg = background(el);
    const mixed = fg.slice(0, 3).map((v, i) => v * fg[3] + bg[i] * (1 - fg[3]));
    const [a, b] = [lum(mixed), lum(bg)];
    errors.push({text: el.textContent.trim().slice(0, 60), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)});
  }
  const summary = [...form.querySelectorAll('.hitl-summary .hitl-summary-link')].filter(shown)
    .map((b) => b.textContent.trim());
  // Every text input, dropdown and text area: the contrast of its value and of its
  // placeholder as drawn (text-fill-color is what Chromium paints text with), and their
  // font styles.
  const values = [];
  for (const el of form.querySelectorAll('input, select, textarea')) {
    if (!shown(el) || el.type === 'checkbox' || el.type === 'radio') continue;
    const cs = getComputedStyle(el), ps = getComputedStyle(el, '::placeholder');
    const bg = drawn(el, [0, 0, 0, 0]);
    values.push({
      field: ([...el.closest('.hitl-input, .hitl-variant, .hitl-map-key')?.classList || []]
        .find((c) => c.startsWith('hitl-field-')) || ''),
      tag: el.tagName.toLowerCase(), disabled: el.disabled,
      empty: el.tagName !== 'SELECT' && el.value === '', placeholder: el.placeholder || '',
      ratio: ratio(drawn(el, rgba(cs.webkitTextFillColor || cs.color)), bg),
      placeholderRatio: ratio(drawn(el, rgba(ps.webkitTextFillColor || ps.color)), bg),
      style: cs.fontStyle, placeholderStyle: ps.fontStyle,
    });
  }
  // Each note under an input (help text, messages): its left edge and its input's.
  const notes = [];
  for (const note of form.querySelectorAll('.hitl-note')) {
    const text = note.querySelector('.hitl-help, .hitl-error, .hitl-sub-label');
    const row = note.previousElementSibling;
    const control = row && [...row.children].find((c) => !c.classList.contains('widget-label') && shown(c));
    if (!text || !shown(text) || !control) continue;
    notes.push({text: text.textContent.trim().slice(0, 40),
                left: text.getBoundingClientRect().left - fr.left,
                inputLeft: control.getBoundingClientRect().left - fr.left});
  }
  // Each entry's remove button, in a list row or a map row: its size.
  const removes = [...form.querySelectorAll('.hitl-remove')].filter(shown).map((b) => {
    const r = b.getBoundingClientRect();
    return {row: b.parentElement.classList.contains('hitl-map-row') ? 'map' : 'list',
            width: r.width, height: r.height, text: b.textContent.trim()};
  });
  return {width: fr.width, edges, overflow, clipped, errors, summary, values, notes, removes};
}
