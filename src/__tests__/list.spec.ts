/**
 * The virtual list (`list.ts`): only the rows in view (and a few around them) are in
 * the DOM, in the order of the items; a row whose item is the same object is kept.
 */
import { Widget } from '@lumino/widgets';

import { VirtualList } from '../list';
import { soonestFirst } from '../model';
import { PromptItem } from '../contract';
import { item } from './items';

const ROW = 40;

function setUp(): { list: VirtualList<PromptItem>; drawn: string[] } {
  const drawn: string[] = [];
  const list = new VirtualList<PromptItem>({
    rowHeight: ROW,
    render: (prompt, row) => {
      drawn.push(prompt.key);
      row.textContent = prompt.prompt;
    }
  });
  Widget.attach(list, document.body);
  return { list, drawn };
}

function many(count: number): PromptItem[] {
  return Array.from({ length: count }, (_, n) =>
    item({ key: `r/p${n}`, deadline_at: 1_800_000_000 + n, prompt: `Q${n}` })
  );
}

describe('VirtualList', () => {
  it('draws the rows in view and a few more, not every item', () => {
    const { list } = setUp();
    list.setItems(many(10_000));
    // jsdom lays nothing out: the list takes ten rows as its height, four more below.
    expect(list.drawn.size).toBe(14);
    const spacer = list.node.querySelector(
      '.hitl-lab-list-spacer'
    ) as HTMLElement;
    expect(spacer.style.height).toBe(`${10_000 * ROW}px`);
    list.dispose();
  });

  it('places each row at its index, soonest deadline first as the model sorts', () => {
    const { list } = setUp();
    const items = many(5).reverse().sort(soonestFirst);
    list.setItems(items);
    const rows = Array.from(list.drawn.entries());
    expect(rows.map(([key]) => key)).toEqual([
      'r/p0',
      'r/p1',
      'r/p2',
      'r/p3',
      'r/p4'
    ]);
    rows.forEach(([key, row], index) => {
      expect(row.style.top).toBe(`${index * ROW}px`);
      expect(row.dataset.key).toBe(key);
      expect(row.getAttribute('role')).toBe('listitem');
    });
    list.dispose();
  });

  it('keeps a row whose item did not change, draws again one that did', () => {
    const { list, drawn } = setUp();
    const items = many(3);
    list.setItems(items);
    const first = list.drawn.get('r/p0');
    drawn.length = 0;
    const changed = { ...items[1], prompt: 'Changed?' };
    list.setItems([items[0], changed, items[2]]);
    expect(drawn).toEqual(['r/p1']);
    expect(list.drawn.get('r/p0')).toBe(first);
    expect(list.drawn.get('r/p1')?.textContent).toBe('Changed?');
    list.dispose();
  });

  it('removes the rows of items that left, and moves the others up', () => {
    const { list } = setUp();
    const items = many(3);
    list.setItems(items);
    const gone = list.drawn.get('r/p0')!;
    list.setItems([items[1], items[2]]);
    expect(gone.isConnected).toBe(false);
    expect(list.drawn.get('r/p1')?.style.top).toBe('0px');
    expect(list.node.querySelectorAll('.hitl-lab-row')).toHaveLength(2);
    list.dispose();
  });
});
