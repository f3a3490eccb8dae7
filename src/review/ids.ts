// Ids of the review room: the house's UUIDv7 ids (sortable by creation) with the room's own prefixes.
import { newId } from '../ids.ts';

export const reviewId = (kind: 'rvq' | 'rvi' | 'rvl') => newId('itm').replace(/^itm_/, `${kind}_`);
