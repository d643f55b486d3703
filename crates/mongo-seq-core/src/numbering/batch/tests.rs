use serde_json::{json, Value};

use super::{GaplessGroups, MachinePlan, NumberBatchMachine};
use crate::error::SeqError;
use crate::numbering::spec::NumberingSpec;
use crate::protocol::command::{Collection, Command, QueryOptions, UpdateStatement};
use crate::protocol::concern::{anchored_find, ClusterTime};
use crate::protocol::plan::{Plan, Step};
use crate::protocol::reply::{Reply, WriteResult};
use crate::sequence::options::SequenceSpec;

/// A gapless group that reads its documents anchored where the batch started it, then writes
/// them: what matters here is the anchor each group is given, not the gapless protocol.
#[derive(Debug, Clone)]
struct ReadThenWrite {
    ids: Vec<Value>,
    after: Option<ClusterTime>,
    written: bool,
}

impl Plan for ReadThenWrite {
    type Output = u64;
    fn current_step(&self) -> Result<Step<u64>, SeqError> {
        Ok(Step::Command(anchored_find(
            json!({ "_id": { "$in": self.ids } }),
            QueryOptions::default(),
            self.after,
        )))
    }
    fn feed(&mut self, _: Reply) -> Result<Step<u64>, SeqError> {
        if self.written {
            return Ok(Step::Done(1));
        }
        self.written = true;
        Ok(Step::Command(Command::Update {
            collection: Collection::Documents,
            updates: vec![UpdateStatement {
                filter: json!({ "_id": self.ids[0] }),
                update: json!({ "$set": { "seq": 1 } }),
            }],
            ordered: true,
        }))
    }
}

#[derive(Debug, Clone)]
struct ReadThenWriteGroups;

impl GaplessGroups for ReadThenWriteGroups {
    type Plan = ReadThenWrite;
    fn start(
        _: &NumberingSpec,
        _: &str,
        ids: Vec<Value>,
        _: Vec<Value>,
        _: Option<i64>,
        after: Option<ClusterTime>,
    ) -> Result<ReadThenWrite, SeqError> {
        Ok(ReadThenWrite {
            ids,
            after,
            written: false,
        })
    }
}

fn written_at(time: Option<ClusterTime>) -> Reply {
    Reply::WriteResult(WriteResult {
        n: 1,
        n_modified: 1,
        operation_time: time,
        ..WriteResult::default()
    })
}

/// A batch of two gapless groups (two scopes here; two periods in the simulator's seed 5
/// focused on stale incarnations): the second group's reads come after the first group's
/// write, whose `operationTime` is past the events'. Anchored at the events alone, a secondary
/// may answer from before that write.
#[test]
fn a_later_gapless_group_reads_after_an_earlier_group_s_write() {
    let sequence = SequenceSpec::parse(&json!({ "name": "credits", "scope": ["shop"] })).unwrap();
    let numbering = NumberingSpec::new(sequence, "seq", None, true).unwrap();
    let documents = vec![
        json!({ "_id": "a", "shop": "east" }),
        json!({ "_id": "b", "shop": "west" }),
    ];
    let events = ClusterTime::new(1, 66);
    let write = ClusterTime::new(1, 84);
    let mut plan = MachinePlan::<NumberBatchMachine<ReadThenWriteGroups>>::build(
        &numbering,
        documents.clone(),
        &[],
        Some(7),
        true,
        events,
    )
    .unwrap();
    // The batch's own check: both documents are still unnumbered.
    let mut step = plan.feed(Reply::Documents { documents });
    let mut anchors = Vec::new();
    loop {
        let reply = match step.expect("a step") {
            Step::Command(Command::Find {
                collection: Collection::Documents,
                after_cluster_time,
                ..
            }) => {
                anchors.push(after_cluster_time);
                Reply::Documents {
                    documents: Vec::new(),
                }
            }
            Step::Command(Command::Update { .. }) => written_at(write),
            Step::Command(other) => panic!("unexpected command {other:?}"),
            Step::Done(report) => {
                assert_eq!(report.numbered, 2);
                break;
            }
        };
        step = plan.feed(reply);
    }
    assert_eq!(anchors, [events, write]);
}
