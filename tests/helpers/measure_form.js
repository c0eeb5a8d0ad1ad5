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
  return {width: fr.width, edges, overflow, clipped, errors, summary};
}
