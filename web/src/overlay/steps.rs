//! The row of question tabs of a bundle: done, over the limit, current,
//! each carrying its question's title (issue 29 item 3).

use leptos::prelude::*;

use super::Draft;

/// One tab per question; a click shows that card.
#[component]
pub(super) fn Steps(
    /// Each question's title, `""` for none.
    titles: Vec<String>,
    draft: Memo<Draft>,
    step: Memo<usize>,
    go: Callback<usize>,
) -> impl IntoView {
    view! {
        <nav class="steps" aria-label="Questions">
            {titles
                .into_iter()
                .enumerate()
                .map(|(i, title)| {
                    let label = if title.is_empty() {
                        format!("Question {}", i + 1)
                    } else {
                        format!("Question {}: {title}", i + 1)
                    };
                    view! {
                        <button
                            type="button"
                            class="step"
                            data-testid="clarification-step"
                            class:done=move || draft.with(|d| d.is_answered(i))
                            class:over=move || draft.with(|d| d.over_questions().contains(&i))
                            aria-current=move || (step.get() == i).then_some("step")
                            aria-label=label
                            on:click=move |_| go.run(i)
                        >
                            {i + 1}
                            {(!title.is_empty()).then(|| view! { <span class="step-title">{title}</span> })}
                        </button>
                    }
                })
                .collect_view()}
        </nav>
    }
}
