//! The clarification overlay for a session's active bundle: one question
//! card at a time, keyboard-first, validated with `clarify-core` before
//! anything is sent (W4/W4a), closed by the POST's own answer (W2/W3).

mod actions;
mod assign;
mod card;
mod decline;
mod draft;
mod heading;
mod keys;
mod overtaken;
mod steps;

use std::collections::HashMap;
use std::time::Duration;

use clarify_core::api::BundleView;
use clarify_core::{MAX_TEXT_RUNES, PendingBundle, Question, Submission, validate_submission};
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use draft::AfterPick;
pub use draft::{Draft, forget as forget_draft};
pub use overtaken::{Overtaken, OvertakenCard, overtaken};

use crate::api::{self, SubmitOutcome};
use card::Card;
use decline::Decline;

/// A change to one bundle's draft.
type Edit = Box<dyn FnOnce(&mut Draft) + Send + Sync>;

/// Drafts of every bundle seen on this page, by `pending_id`.
pub type Drafts = RwSignal<HashMap<String, Draft>>;

/// The overlay for `bundle`; `on_done` hears how a submit ended.
#[component]
pub fn Overlay(
    bundle: BundleView,
    /// Other bundles asking the same (issue 29 item 5): the answer goes to
    /// each of them too.
    alike: Vec<String>,
    drafts: Drafts,
    on_done: Callback<SubmitOutcome>,
    /// Where an answer goes instead of being sent at once: the inbox holds
    /// it for its Undo (issue 46 item 2).
    #[prop(optional)]
    hold: Option<Callback<Submission>>,
    /// What Escape does instead of folding the overlay away: the inbox
    /// closes the row (issue 46 item 5).
    #[prop(optional)]
    on_escape: Option<Callback<()>>,
) -> impl IntoView {
    let detached = bundle.agent_disconnected;
    let alike = StoredValue::new(alike);
    let heading = RwSignal::new(None::<String>);
    spawn_local(heading::task_heading(
        bundle.bundle.task_id.clone(),
        bundle.bundle.session_id.clone(),
        heading,
    ));
    let PendingBundle {
        pending_id: pid,
        context,
        questions,
        expires_at,
        html,
        assignee,
        ..
    } = bundle.bundle;
    let assign_to = StoredValue::new((pid.clone(), assignee));
    let context = crate::html::of(&html, "context", &context);
    let call = html.get("tool_call").cloned(); // An approval's call (issue 47).
    let html = StoredValue::new(html);
    let questions: Vec<Question> = questions.into_iter().map(Into::into).collect();
    let count = questions.len();
    drafts.update(|m| {
        m.entry(pid.clone())
            .or_insert_with(|| draft::load(&pid, count).unwrap_or_else(|| Draft::new(count)));
    });
    let questions = StoredValue::new(questions);
    let key = StoredValue::new(pid);
    let draft = Memo::new(move |_| {
        drafts.with(|m| key.with_value(|k| m.get(k).cloned()).unwrap_or_default())
    });
    let edit = move |f: Edit| {
        drafts.update(|m| {
            let k = key.get_value();
            if let Some(d) = m.get_mut(&k) {
                f(d);
                draft::save(&k, d);
            }
        });
    };

    let step = Memo::new(move |_| draft.with(|d| d.step.min(count.saturating_sub(1))));
    let collapsed = Memo::new(move |_| on_escape.is_none() && draft.with(|d| d.collapsed)); // issue 46 item 5
    let answered = Memo::new(move |_| draft.with(Draft::answered));
    let over = Memo::new(move |_| draft.with(Draft::over_limit));
    let submitting = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    // The error only said the server was out of reach: cleared when it is
    // back, since the draft is still here to send (issue 29).
    let unreachable = RwSignal::new(false);
    Effect::new(move |seen: Option<u64>| {
        let now = crate::connection::returns();
        if seen.is_some_and(|s| s != now) && unreachable.get_untracked() {
            unreachable.set(false);
            error.set(None);
        }
        now
    });
    let root: NodeRef<html::Section> = NodeRef::new();

    // Focus moves into the overlay when it opens, so keys work at once.
    let focus_in = move |selector: Option<&'static str>| {
        set_timeout(
            move || {
                let Some(el) = root.get_untracked() else {
                    return;
                };
                let target = selector
                    .and_then(|s| el.query_selector(s).ok().flatten())
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
                let _ = match target {
                    Some(t) => t.focus(),
                    None => el.focus(),
                };
            },
            Duration::ZERO,
        );
    };
    focus_in(None);
    // ...and goes back where it was when the overlay goes away.
    let previous = StoredValue::new_local(document().active_element());
    on_cleanup(move || {
        if let Some(el) = previous
            .get_value()
            .filter(|e| e.is_connected() && e.tag_name() != "BODY")
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    });
    // Escape leaves focus on the button that brings the overlay back.
    let collapse = move || {
        if let Some(close) = on_escape {
            close.run(());
            return;
        }
        edit(Box::new(|d| d.collapsed = true));
        set_timeout(
            move || {
                if let Some(button) = document()
                    .query_selector("[data-testid=clarification-expand]")
                    .ok()
                    .flatten()
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                {
                    let _ = button.focus();
                }
            },
            Duration::ZERO,
        );
    };

    let go = move |to: usize, selector: Option<&'static str>| {
        if to < count {
            edit(Box::new(move |d| d.step = to));
            focus_in(selector);
        }
    };

    let send = move |submission: Submission| {
        if submitting.get_untracked() {
            return;
        }
        error.set(None);
        unreachable.set(false);
        if let Some(hold) = hold {
            hold.run(submission);
            return;
        }
        submitting.set(true);
        let pid = key.get_value();
        edit(Box::new(|d| d.sending = true));
        let alike = alike.get_value();
        spawn_local(async move {
            match api::respond_all(&pid, &alike, &submission).await {
                Ok(outcome) => {
                    draft::forget(&pid);
                    on_done.run(outcome);
                    drafts.update(|m| {
                        m.remove(&pid);
                    });
                }
                Err(e) => {
                    // The overlay stays answerable: nothing was settled.
                    let offline = e == api::ApiError::Offline;
                    error.set(Some(if offline {
                        "Your answer was not sent: the server cannot be reached right now. \
                         It is kept here; send it again once the connection is back."
                            .to_owned()
                    } else {
                        format!("Your answer was not sent. {}", e.message())
                    }));
                    unreachable.set(offline);
                    submitting.set(false);
                    edit(Box::new(|d| d.sending = false));
                }
            }
        });
    };
    let submit = move || {
        if over.get_untracked() {
            error.set(Some(format!(
                "An answer is longer than {MAX_TEXT_RUNES} characters."
            )));
            return;
        }
        let submission = questions.with_value(|q| draft.with_untracked(|d| d.submission(q)));
        match questions.with_value(|q| validate_submission(q, &submission)) {
            Ok(_) => send(submission),
            Err(e) => error.set(Some(format!("Cannot send yet: {e}."))),
        }
    };
    // "Decline…" opens the confirmation; only its Decline sends (issue 29).
    let declining = RwSignal::new(false);
    let decline = Callback::new(move |reason: String| send(Submission::reject(&reason)));
    // A click or number key on an option of card `s`: recorded, then one
    // click answers a single question and a bundle moves to its next
    // unanswered card (Draft::after_pick).
    let pick = move |s: usize, option: String| {
        let multi = questions.with_value(|q| q.get(s).is_some_and(|q| q.multi_select));
        edit(Box::new(move |d| d.toggle(s, &option, multi)));
        match draft.with_untracked(|d| d.after_pick(s, count, multi)) {
            AfterPick::Stay => {}
            AfterPick::Card(to) => go(to, None),
            AfterPick::Submit => submit(),
        }
    };
    let can_submit =
        move || !submitting.get() && !over.get() && answered.get() == count && count > 0;
    // Escape folds the overlay away from anywhere on the page, also once
    // focus has left it (issue 29); inside it, `on_key` has done so first.
    let escape = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "Escape" && !ev.default_prevented() && !collapsed.get_untracked() {
            collapse();
        }
    });
    on_cleanup(move || escape.remove());

    let on_key = move |ev: web_sys::KeyboardEvent| {
        let in_text = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|e| e.tag_name() == "TEXTAREA");
        let pressed = keys::Pressed {
            key: ev.key(),
            modifier: ev.ctrl_key() || ev.meta_key(),
            alt: ev.alt_key(),
            shift: ev.shift_key(),
            in_text,
        };
        let s = step.get_untracked();
        let action = keys::action(&pressed, s, count);
        if action != keys::Action::None {
            ev.prevent_default();
        }
        match action {
            keys::Action::Collapse => collapse(),
            keys::Action::Submit if can_submit() => submit(),
            keys::Action::Card(to, text) => go(to, text.then_some("textarea")),
            keys::Action::Option(n) => {
                if let Some(option) = questions.with_value(|q| {
                    q.get(s)
                        .and_then(|q| q.options.get(n - 1).map(|o| o.option_id.clone()))
                }) {
                    pick(s, option);
                }
            }
            _ => {}
        }
    };

    let card = move || {
        let s = step.get();
        let Some(q) = questions.with_value(|q| q.get(s).cloned()) else {
            return ().into_any();
        };
        let pick = Callback::new(move |option: String| pick(s, option));
        view! { <Card question=q html=html index=s count=count draft=draft edit=Callback::new(edit) pick=pick over=over /> }
            .into_any()
    };

    view! {
        <Show
            when=move || !collapsed.get()
            fallback=move || {
                view! {
                    <button
                        type="button"
                        class="expand"
                        data-testid="clarification-expand"
                        on:click=move |_| {
                            edit(Box::new(|d| d.collapsed = false));
                            focus_in(None);
                        }
                    >
                        "A question is waiting for your answer — show"
                    </button>
                }
            }
        >
            <section
                class="overlay"
                data-testid="clarification-overlay"
                role="dialog"
                aria-labelledby="clarification-heading"
                tabindex="-1"
                node_ref=root
                on:keydown=on_key
            >
                // The task, so a person knows what this is about (issue 29).
                <h2 id="clarification-heading" data-testid="clarification-heading">
                    {move || heading.get().unwrap_or_else(|| "The agent needs your input".to_owned())}
                </h2>
                {(!expires_at.is_empty())
                    .then(|| view! { <p class="hint"><crate::expiry::Countdown deadline=crate::expiry::deadline(&expires_at) /></p> })}
                {(detached)
                    .then(|| {
                        view! {
                            <p class="notice" data-testid="clarification-detached">
                                "The agent has moved on — your answer will be sent as a new message."
                            </p>
                        }
                    })}
                {(!context.is_empty())
                    .then(|| {
                        view! {
                            <div
                                class="context markdown"
                                data-testid="clarification-context"
                                inner_html=context.clone()
                            ></div>
                        }
                    })}
                {call.clone().map(|c| view! { <div class="approval" data-testid="clarification-approval" inner_html=c></div> })}
                {(count > 1)
                    .then(|| {
                        let titles = questions.with_value(|q| q.iter().map(|q| q.title.clone()).collect());
                        view! { <steps::Steps titles=titles draft=draft step=step go=Callback::new(move |i| go(i, None)) /> }
                    })}
                // One live region for progress and errors, present from the
                // start so screen readers hear its changes.
                <div aria-live="polite" class="status">
                    // "0 of 1 answered" says nothing of one question (issue 46).
                    {(count > 1)
                        .then(|| {
                            view! {
                                <p data-testid="clarification-progress" class="progress">
                                    {move || format!("{} of {count} answered", answered.get())}
                                </p>
                            }
                        })}
                </div>
                {card}
                {move || {
                    error
                        .get()
                        .map(|e| {
                            view! {
                                <p class="error" role="alert" data-testid="clarification-error">
                                    {e}
                                </p>
                            }
                        })
                }}
                <Decline open=declining busy=submitting.into() decline=decline />
                <actions::Actions
                    count=count
                    step=step.into()
                    submitting=submitting
                    declining=declining
                    can_submit=Signal::derive(can_submit)
                    next=Callback::new(move |()| go(step.get_untracked() + 1, None))
                    submit=Callback::new(move |()| submit())
                />
                {move || {
                    let (pending_id, assignee) = assign_to.get_value();
                    view! { <assign::Assign pending_id=pending_id assignee=assignee /> }
                }}
                <p class="hint keys">"1–9 pick · ←/→ move · Ctrl+Enter submit · Esc hide"</p>
            </section>
        </Show>
    }
}
