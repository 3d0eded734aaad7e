// Sets up tasks, sessions and questions through the real REST API, the way
// an agent and its host would.
import type { APIRequestContext } from '@playwright/test';

export interface Asked {
  taskId: string;
  sessionId: string;
  agentToken: string;
  pendingId: string;
}

// The resume target lets an answer reach an agent that is not blocked on
// /wait; without one (resume: null) the answer is kept for the agent to
// collect on its next wait (pull delivery).
export async function newSession(request: APIRequestContext, title = 'a task', resume: object | null = { command: ['/bin/true'] }) {
  const task = await request.post('/api/v1/tasks', { data: { title } });
  if (task.status() !== 201) throw new Error(`task: ${task.status()} ${await task.text()}`);
  const taskId = (await task.json()).id as string;
  const data = resume ? { resume } : {};
  const session = await request.post(`/api/v1/tasks/${taskId}/sessions`, { data });
  if (session.status() !== 201) throw new Error(`session: ${session.status()} ${await session.text()}`);
  const body = await session.json();
  return { taskId, sessionId: body.id as string, agentToken: body.agent_token as string };
}

export async function ask(
  request: APIRequestContext,
  session: { sessionId: string; agentToken: string },
  questions: { prompt: string; title?: string; multi_select?: boolean; options: { label: string }[] }[],
  context?: string,
): Promise<string> {
  const response = await request.post('/api/v1/clarification/request', {
    headers: { Authorization: `Bearer ${session.agentToken}` },
    data: { session_id: session.sessionId, questions, ...(context ? { context } : {}) },
  });
  if (response.status() !== 201 && response.status() !== 200) {
    throw new Error(`ask: ${response.status()} ${await response.text()}`);
  }
  return (await response.json()).pending_id as string;
}

// Each expiring question has words of its own: one left open by an earlier
// test in the same worker would otherwise be alike (issue 29 item 5) and
// fold this one into its row, which CI once met.
let expiring = 0;

/** One question that expires in `seconds`, on a session of its own. */
export async function askExpiring(request: APIRequestContext, seconds: number): Promise<Asked> {
  const session = await newSession(request);
  const response = await request.post('/api/v1/clarification/request', {
    headers: { Authorization: `Bearer ${session.agentToken}` },
    data: {
      session_id: session.sessionId,
      expires_in_seconds: seconds,
      questions: [{ prompt: `Quick (#${++expiring})?`, options: [{ label: 'Yes' }, { label: 'No' }] }],
    },
  });
  if (response.status() !== 201) throw new Error(`ask: ${response.status()} ${await response.text()}`);
  return { ...session, pendingId: (await response.json()).pending_id as string };
}

export async function askOne(request: APIRequestContext, prompt = 'Which database?'): Promise<Asked> {
  const session = await newSession(request);
  const pendingId = await ask(request, session, [
    { prompt, options: [{ label: 'SQLite' }, { label: 'PostgreSQL' }] },
  ]);
  return { ...session, pendingId };
}
