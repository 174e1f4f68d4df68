#!/usr/bin/env bash
# CLI contract: exit codes 0 / 2 / 1 and error messages naming the field (SCENARIO.md).
# usage: cli_test.sh HAPMOE_BINARY REPO_DIR
set -u
bin=$1
repo=$2
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {  # name expected_exit expected_stderr_substring -- command...
  local name=$1 want=$2 needle=$3
  shift 3
  local out err code
  out=$(timeout 60 "$@" 2>"$tmp/err" </dev/null)
  code=$?
  err=$(cat "$tmp/err")
  if [[ $code -ne $want ]]; then
    echo "FAIL $name: exit $code, expected $want; stderr: $err"
    fail=$((fail + 1))
  elif [[ -n $needle && $err != *"$needle"* && $out != *"$needle"* ]]; then
    echo "FAIL $name: output lacks '$needle'; stderr: $err"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

scenario() {  # file json
  printf '%s' "$2" >"$tmp/$1"
  echo "$tmp/$1"
}

base_training='"training": {"global_batch_size": 256, "seq_length": 4096}'
check "validate ok" 0 "ok" "$bin" validate "$repo/examples/mixtral-s-16-1.json"
check "bad json" 2 '$' "$bin" validate "$(scenario bad.json '{"model": "mixtral-8x7b",')"
check "directory as scenario" 2 "cannot read" "$bin" validate "$repo/examples"
check "not an object" 2 "expected an object" "$bin" validate "$(scenario arr.json '[1,2]')"
check "wrong type" 2 "training.global_batch_size" "$bin" validate \
  "$(scenario wt.json '{"model":"mixtral-8x7b","cluster":"16-1","training":{"global_batch_size":"256","seq_length":4096}}')"
check "negative size" 2 "model.num_layers" "$bin" validate \
  "$(scenario neg.json "{\"model\":{\"preset\":\"mixtral-8x7b\",\"num_layers\":-4},\"cluster\":\"16-1\",$base_training}")"
check "zero gpus" 2 "cluster.groups[0].nodes" "$bin" validate \
  "$(scenario zero.json "{\"model\":\"mixtral-8x7b\",\"cluster\":{\"groups\":[{\"gpu\":\"h100-sxm\",\"nodes\":0}]},$base_training}")"
check "no groups" 2 "cluster.groups" "$bin" validate \
  "$(scenario nog.json "{\"model\":\"mixtral-8x7b\",\"cluster\":{\"groups\":[]},$base_training}")"
check "unknown preset" 2 "cluster.groups[0].gpu" "$bin" validate \
  "$(scenario up.json "{\"model\":\"mixtral-8x7b\",\"cluster\":{\"groups\":[{\"gpu\":\"x100\",\"nodes\":1}]},$base_training}")"
check "unknown model preset" 2 "unknown model preset" "$bin" plan \
  "$(scenario um.json "{\"model\":\"mixtral-9x9b\",\"cluster\":\"16-1\",$base_training}")"
check "unknown field" 2 "training.globl_batch_size" "$bin" validate \
  "$(scenario uf.json '{"model":"mixtral-8x7b","cluster":"16-1","training":{"globl_batch_size":256,"seq_length":4096}}')"
check "experts not divisible" 2 "model.moe_router_num_groups" "$bin" validate \
  "$(scenario ed.json "{\"model\":{\"preset\":\"mixtral-8x7b\",\"moe_router_num_groups\":3,\"moe_router_group_topk\":1},\"cluster\":\"16-1\",$base_training}")"
check "topk above experts" 2 "model.moe_router_topk" "$bin" validate \
  "$(scenario tk.json "{\"model\":{\"preset\":\"mixtral-8x7b\",\"moe_router_topk\":9},\"cluster\":\"16-1\",$base_training}")"
check "ep rule in evaluate" 2 "experts_divisible_by_ep" "$bin" evaluate \
  "$(scenario ep.json "{\"model\":\"mixtral-8x7b\",\"cluster\":\"h100-64\",$base_training,\"plan\":{\"tp\":1,\"pp\":4,\"dp\":16,\"ep\":16,\"stages\":[{\"layers\":8},{\"layers\":8},{\"layers\":8},{\"layers\":8}]}}")"
check "batch rule in evaluate" 2 "batch_divisible" "$bin" evaluate \
  "$(scenario bd.json "{\"model\":\"mixtral-8x7b\",\"cluster\":\"h100-64\",\"training\":{\"global_batch_size\":100,\"seq_length\":4096},\"plan\":{\"tp\":1,\"pp\":4,\"dp\":16,\"ep\":8,\"stages\":[{\"layers\":8},{\"layers\":8},{\"layers\":8},{\"layers\":8}]}}")"
check "evaluate without plan" 2 "plan" "$bin" evaluate "$repo/examples/mixtral-s-16-1.json"
check "timeline without plan" 2 "plan" "$bin" timeline "$repo/examples/mixtral-s-16-1.json"
check "timeline of a plan" 0 '"matches_cost_model":true' "$bin" timeline "$repo/examples/c1-mixtral-8x7b-h100-64.json"
check "priced plan" 0 "USD per million tokens" "$bin" plan "$repo/examples/mixtral-8x7b-priced.json"
check "priced plan json" 0 '"pareto":[' "$bin" plan "$repo/examples/mixtral-8x7b-priced.json" --json
check "node loss" 0 "if one node fails" "$bin" node-loss "$repo/examples/mixtral-8x7b-priced.json"
check "node loss json" 0 '"hapmoe.node_loss/1"' "$bin" node-loss "$repo/examples/mixtral-8x7b-priced.json" --json
check "node loss of a plan with a broken rule" 2 "experts_divisible_by_ep" "$bin" node-loss "$tmp/ep.json"
check "prices on some groups" 2 "cluster.groups[1].price_per_gpu_hour" "$bin" validate \
  "$(scenario pp.json "{\"model\":\"mixtral-8x7b\",\"cluster\":{\"groups\":[{\"gpu\":\"h100-sxm\",\"nodes\":1,\"price_per_gpu_hour\":2},{\"gpu\":\"h20\",\"nodes\":1}]},$base_training}")"
check "cost objective without prices" 2 "cluster.groups[0].price_per_gpu_hour" "$bin" validate \
  "$(scenario cn.json "{\"model\":\"mixtral-8x7b\",\"cluster\":\"16-1\",$base_training,\"search\":{\"objective\":\"cost\"}}")"
check "missing file" 2 "cannot read" "$bin" plan "$tmp/does-not-exist.json"
check "unknown command" 2 "unknown command" "$bin" frobnicate
check "bad --top" 2 "--top" "$bin" plan "$repo/examples/mixtral-s-16-1.json" --top zero
check "stdin" 0 "ok" bash -c "\"$bin\" validate - < \"$repo/examples/mixtral-s-16-1.json\""
check "presets" 0 "mixtral-8x7b" "$bin" presets models
check "schema" 0 "cluster.groups[].gpu.memory_gib" "$bin" schema
check "schema json" 0 '"format": "hapmoe.schema/1"' "$bin" schema --json
check "schema markdown" 0 "| \`training.moe_load_imbalance\` |" "$bin" schema --markdown
check "schema both" 2 "not both" "$bin" schema --json --markdown
check "schema file" 2 "no file" "$bin" schema x.json
check "tiny bandwidth" 2 "cluster.groups[0].gpu.inter_node_gbps" "$bin" validate \
  "$(scenario tiny.json "{\"model\":\"mixtral-8x7b\",\"cluster\":{\"groups\":[{\"gpu\":{\"preset\":\"h100-sxm\",\"inter_node_gbps\":5e-324},\"nodes\":1}]},$base_training}")"
check "plan table" 0 "Megatron-LM" "$bin" plan "$repo/examples/mixtral-s-16-1.json"
check "hetero plan table" 0 "FlagScale train config" "$bin" plan "$repo/examples/mixtral-l-16-2-hetero.json"
check "infeasible is success" 0 "no feasible plan" "$bin" plan \
  "$(scenario inf.json '{"model":"deepseek-v3","cluster":{"groups":[{"gpu":"h100-sxm","nodes":1}]},"training":{"global_batch_size":64,"seq_length":4096}}')"
for f in "$repo"/examples/*.json; do
  if grep -q '"plan"' "$f"; then
    check "evaluate $(basename "$f")" 0 "" "$bin" evaluate "$f" --json
  fi
  check "plan $(basename "$f")" 0 "" "$bin" plan "$f" --json
done
# profile importers (tests/profile/)
pr="$repo/tests/profile"
check "import-nccl" 0 '"all_to_all"' "$bin" profile import-nccl "$pr/nccl-alltoall-h100-2x8.txt" --gpu h100-sxm
check "import-nccl needs --gpu" 2 "--gpu" "$bin" profile import-nccl "$pr/nccl-alltoall-h100-2x8.txt"
check "import-nccl bad placement" 2 "placement" "$bin" profile import-nccl "$pr/nccl-alltoall-h100-2x8.txt" --gpu h100-sxm --placement rack
check "import-log" 0 '"fitted_iteration_s"' "$bin" profile import-log "$pr/qwen3-30b-a3b-h100-16-fp8-run-b.log" --scenario "$pr/qwen3-30b-a3b-h100-16-fp8-run-b.json"
check "import-log needs a plan" 2 "scenario.plan" "$bin" profile import-log "$pr/qwen3-30b-a3b-h100-16-fp8-run-b.log" --scenario "$repo/examples/mixtral-s-16-1.json"
check "import-log not a log" 2 "log" "$bin" profile import-log "$pr/nccl-alltoall-h100-2x8.txt" --scenario "$pr/qwen3-30b-a3b-h100-16-fp8-run-b.json"
check "unknown profile command" 2 "unknown profile command" "$bin" profile import-csv x
# byte-identical output across runs
a=$("$bin" plan "$repo/examples/mixtral-s-16-1.json" --json)
b=$("$bin" plan "$repo/examples/mixtral-s-16-1.json" --json)
if [[ "$a" == "$b" ]]; then pass=$((pass + 1)); else echo "FAIL plan output differs between runs"; fail=$((fail + 1)); fi

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
