//! What `with_retry` takes and returns, and what a subscription yields
//! beside `Arc<AgentEvent>`, come with the prelude.

use agentstream_tokio::prelude::{
    AgentEvent, Lagged, RetryModel, RetryPolicy, Runtime, ScriptedModel, ScriptedTurn, Tokio,
};

#[tokio::test]
async fn the_retry_types_and_lagged_come_with_the_prelude() {
    let mut policy = RetryPolicy::default();
    policy.max_retries = 5;
    let retried: RetryModel<ScriptedModel, _> =
        Tokio.with_retry(ScriptedModel::new(Vec::<ScriptedTurn>::new()), policy);
    assert_eq!(retried.policy().max_retries, 5);
    let missed: Result<std::sync::Arc<AgentEvent>, Lagged> = Err(Lagged { missed: 3 });
    assert_eq!(missed.err().map(|lagged| lagged.missed), Some(3));
}
