//! `/s/{session_id}` and `/t/{task_id}`: one session's transcript and the
//! overlay for its active bundle — the one the server calls `active`, never
//! a superseded one.

use std::collections::HashMap;

use clarify_core::EventKind;
use clarify_core::api::{BundleView, Message};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::{self, SubmitOutcome};
use crate::overlay::{Overlay, Overtaken, OvertakenCard, overtaken};
use crate::transcript::{Transcript, apply_winner};
use crate::ws;

/// The session's active bundle, as the server counts them (D4): the newest
/// of its active bundles. The transcript is never read to guess it.
async fn active_bundle(session_id: &str) -> (Option<BundleView>, Vec<String>) {
    let Ok(session) = api::session(session_id).await else {
        return (None, Vec::new());
    };
    let ids = session.active_pending_ids;
    let Some(newest) = ids.last() else {
        return (None, ids);
    };
    let view = api::bundle(newest).await.ok().filter(|b| b.active);
    (view, ids)
}

/// One session.
#[component]
pub fn SessionPage(session_id: String) -> impl IntoView {
    let messages = RwSignal::new(Vec::<Message>::new());
    let bundle = RwSignal::new(None::<BundleView>);
    let drafts = RwSignal::new(HashMap::new());
    let notice = RwSignal::new(None::<(&'static str, String)>);
    let load_error = RwSignal::new(None::<String>);
    let settled = RwSignal::new(None::<Overtaken>);
    let waiting_ids = RwSignal::new(Vec::<String>::new());
    let id = StoredValue::new(session_id);

    // Loads can overlap (socket events, a submit's outcome); only the newest
    // may write, or a stale answer could reopen a settled overlay.
    let generation = StoredValue::new(0_u64);
    let load = move || {
        let sid = id.get_value();
        let mine = generation.get_value() + 1;
        generation.set_value(mine);
        spawn_local(async move {
            let result = api::messages(&sid).await;
            let (active, ids) = match &result {
                Ok(_) => active_bundle(&sid).await,
                Err(_) => (None, Vec::new()),
            };
            if generation.get_value() != mine {
                return;
            }
            match result {
                Ok(list) => {
                    load_error.set(None);
                    waiting_ids.set(ids);
                    messages.set(list);
                    // Re-mounting the overlay would steal focus; only a
                    // different bundle (or a change in it) replaces it.
                    if bundle.get_untracked() != active {
                        let gone = bundle
                            .with_untracked(|b| b.as_ref().map(|b| b.bundle.pending_id.clone()))
                            .filter(|old| {
                                active.as_ref().is_none_or(|a| &a.bundle.pending_id != old)
                            });
                        bundle.set(active);
                        // Settled elsewhere mid-answer: say so, keep the draft.
                        if let Some(old) = gone {
                            spawn_local(async move {
                                if let Some(o) = overtaken(&old, drafts).await {
                                    settled.set(Some(o));
                                }
                            });
                        }
                    }
                }
                // Out of reach: the banner says so; the return reloads.
                Err(api::ApiError::Offline) => {}
                Err(e) => load_error.set(Some(e.message())),
            }
        });
    };
    load();
    ws::listen(move |event| {
        let ours = event
            .payload
            .session_id()
            .is_some_and(|s| id.with_value(|id| id == s));
        if ours || event.action == EventKind::Resync {
            load();
        }
    });

    let on_done = Callback::new(move |outcome: SubmitOutcome| {
        // What the POST said is newer than any load still in flight.
        generation.update_value(|g| *g += 1);
        bundle.set(None);
        settled.set(None);
        match outcome {
            SubmitOutcome::Claimed(status, response) => {
                // The body is the server's record, so the transcript is right
                // at once, socket or not; the reload only confirms it.
                messages.update(|m| apply_winner(m, status, &response));
                notice.set(None);
                load();
                // No agent was there to take it: say it is kept, not lost.
                let pending_id = response.pending_id;
                spawn_local(async move {
                    if api::bundle(&pending_id)
                        .await
                        .is_ok_and(|b| b.awaiting_pickup)
                    {
                        notice.set(Some((
                            "clarification-kept",
                            "Answer saved; the agent will pick it up when it checks again."
                                .to_owned(),
                        )));
                    }
                });
            }
            SubmitOutcome::Lost(status, response) => {
                // W3: the winner's answer, not ours, is what happened.
                messages.update(|m| apply_winner(m, status, &response));
                notice.set(Some((
                    "clarification-lost",
                    "Someone else answered first; their answer is shown below.".to_owned(),
                )));
            }
            SubmitOutcome::Inactive(why) => {
                notice.set(Some(("clarification-inactive", why.sentence())));
                load();
            }
            // Never here: a task page answers one bundle at a time.
            alike @ SubmitOutcome::Alike { .. } => {
                notice.set(Some(("clarification-alike", alike.sentence())));
                load();
            }
        }
    });

    view! {
        <p><a href="/">"← All tasks"</a></p>
        {move || load_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        {move || {
            notice
                .get()
                .map(|(testid, text)| {
                    view! {
                        <p class="notice" role="status" data-testid=testid>
                            {text}
                        </p>
                    }
                })
        }}
        <Transcript
            messages=messages
            waiting=waiting_ids.into()
            active=Signal::derive(move || bundle.with(|b| b.as_ref().map(|b| b.bundle.pending_id.clone())))
        />
        {move || {
            settled
                .get()
                .map(|o| {
                    view! { <OvertakenCard overtaken=o dismiss=Callback::new(move |()| settled.set(None)) /> }
                })
        }}
        {move || {
            bundle
                .get()
                .map(|b| {
                    view! { <Overlay bundle=b alike=Vec::new() drafts=drafts on_done=on_done /> }
                })
        }}
    }
}

/// The session a task opens on: the one owning an active bundle, else the
/// primary (first) session.
async fn pick_session(task_id: &str) -> Result<Option<String>, api::ApiError> {
    let sessions = api::sessions(task_id).await?;
    let owner = sessions
        .iter()
        .find(|s| !s.active_pending_ids.is_empty())
        .or_else(|| sessions.first());
    Ok(owner.map(|s| s.id.clone()))
}

/// `/t/{task_id}`.
#[component]
pub fn TaskPage(task_id: String) -> impl IntoView {
    let title = RwSignal::new(String::new());
    let chosen = RwSignal::new(None::<Result<Option<String>, String>>);
    spawn_local(async move {
        match api::task(&task_id).await {
            Ok(task) => title.set(task.title),
            // Unknown, or in a workspace this person cannot see: one page
            // says so (issue 46 item 10), not a failure to list sessions.
            Err(api::ApiError::NotFound) => {
                title.set("No such task".to_owned());
                chosen.set(Some(Err(
                    "It may never have existed, or it is in a workspace you cannot see.".to_owned(),
                )));
                return;
            }
            Err(_) => {}
        }
        let picked = pick_session(&task_id).await.map_err(|e| match e {
            api::ApiError::NotFound => "This task's sessions cannot be listed.".to_owned(),
            other => other.message(),
        });
        chosen.set(Some(picked));
    });
    view! {
        <h2 class="page-title" data-testid="task-title">{move || title.get()}</h2>
        {move || match chosen.get() {
            None => view! { <p class="hint" aria-busy="true">"Loading…"</p> }.into_any(),
            Some(Ok(Some(sid))) => view! { <SessionPage session_id=sid /> }.into_any(),
            Some(Ok(None)) => view! { <p>"No session yet."</p> }.into_any(),
            Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
        }}
    }
}
