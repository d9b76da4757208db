/** The demo's documents: links a team keeps. */
import type { Person } from './content.js';
import type { DemoContext } from './context.js';

export async function documents({ db, ids, calendar }: DemoContext, teamId: string, links: { name: string; url: string; by: Person; id?: string }[]): Promise<void> {
  const { settledIn } = calendar;
  await db
    .insertInto('documents')
    .values(
      links.map((link, index) => ({
        ...(link.id ? { id: link.id } : {}),
        team_id: teamId,
        name: link.name,
        url: link.url,
        type: 'LINK' as const,
        created_by_id: ids[link.by],
        created_at: settledIn(90 + index),
      })),
    )
    .execute();
}
