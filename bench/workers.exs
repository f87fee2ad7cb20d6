defmodule RustyJson.Bench.Workers do
  @moduledoc false
  # What the scripts that time each side in a VM of its own share (bench/ab.exs, bench/anchors.exs): the pin to
  # one core, the run of a worker VM and the reading of its lines, and the timing of one case.

  @doc """
  `taskset -c cpu` as a command prefix when taskset exists and the machine has more than `cpu` cores, else `[]`:
  left to float, the VM's threads land differently from run to run (bench/notes/80-reproducibility.md).
  """
  def pin(cpu) do
    taskset = System.find_executable("taskset")
    if taskset && System.schedulers_online() > cpu, do: ["taskset", "-c", "#{cpu}"], else: []
  end

  @doc """
  Runs `mix run --no-compile script worker_args...` in `dir` behind `pin`, and returns its lines of the form
  `label<TAB>value` as a map (values trimmed). A VM that exits non-zero is reported on stderr as `name`.
  """
  def run(name, dir, pin, script, worker_args) do
    [cmd | rest] = pin ++ ["mix", "run", "--no-compile", script | worker_args]
    {out, status} = System.cmd(cmd, rest, cd: dir, stderr_to_stdout: true)
    if status != 0, do: IO.puts(:stderr, "#{name} exited #{status}:\n#{out}")

    for line <- String.split(out, "\n"),
        [label, value] <- [String.split(line, "\t")],
        into: %{} do
      {label, String.trim(value)}
    end
  end

  @doc "The best of `n` timings of `fun` (µs), in a fresh process after one warm-up call."
  def best_of(fun, n) do
    task =
      Task.async(fn ->
        fun.()
        Enum.min(for _ <- 1..n, do: elem(:timer.tc(fun), 0))
      end)

    Task.await(task, :infinity)
  end
end
