/**
 * Where a prompt's card is: the notebook open in this page whose kernel said it shows
 * the card, and the cell (by its id). Only what is open here is found: a card in a
 * notebook that is not open in this page has no place to show.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { IPlace, IPromptItem } from './tokens';

/** A card's notebook and the index of its cell there. */
export interface IFound {
  panel: NotebookPanel;
  index: number;
}

export class CardPlaces {
  constructor(
    private _app: JupyterFrontEnd,
    private _tracker: INotebookTracker | null
  ) {}

  /** The open notebook and cell showing ``item``'s card, if any. */
  find(item: IPromptItem): IFound | null {
    const place = item.place;
    if (!place || !this._tracker) {
      return null;
    }
    const panel = this._tracker.find(
      candidate =>
        candidate.sessionContext.session?.kernel?.id === place.kernel_id
    );
    if (!panel) {
      return null;
    }
    const index = cellIndex(panel, place);
    return index < 0 ? null : { panel, index };
  }

  /** "approval.ipynb, cell 3": where the card is, or null. */
  label(item: IPromptItem): string | null {
    const found = this.find(item);
    if (!found) {
      return null;
    }
    return `${found.panel.context.localPath.split('/').pop()}, cell ${found.index + 1}`;
  }

  /** Open the card's notebook and scroll to its cell; false when it is not open here. */
  async show(item: IPromptItem): Promise<boolean> {
    const found = this.find(item);
    if (!found) {
      return false;
    }
    const { panel, index } = found;
    this._app.shell.activateById(panel.id);
    const notebook = panel.content;
    notebook.activeCellIndex = index;
    await notebook.scrollToItem(index, 'start');
    return true;
  }
}

function cellIndex(panel: NotebookPanel, place: IPlace): number {
  const cells = panel.content.model?.cells;
  if (!cells) {
    return -1;
  }
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === place.cell_id) {
      return i;
    }
  }
  return -1;
}
