"""The batch runtime: a run's deals played by workers into a result file and a move log.

Read runner.py first: run() is the whole run, in order. Each module has one job, and
imports only modules listed above it:

    files         output paths that never destroy data, temporary names, locks
    journal       a run's finished rows on disk at once, for a killed run's salvage
    results       the Parquet result file: schema, writer, its stored description
    job           what a worker plays: a job and chunks of its deals, guarded plug-ins
    pool          chunks on local forked workers that can die, loop or be signalled
    cluster       chunks on a Dask cluster
    request       the run request, its default file name, the checks made on it
    outputs       a run's outputs claimed: checked, locked, stale temporaries removed
    totals        sums over the rows written, and how the run ended (RunResult)
    stop_signals  Ctrl-C, SIGTERM and SIGHUP asking a run to stop between writes
    move_log      the --log-moves lines of each finished chunk
    finish        journals merged with the rows kept before into the final files
    resume        the rows --resume keeps, checked to be this run's; a run found complete
    salvage       a killed run's journals turned into an incomplete result file
    executors     the chunks sent to the local pool or to Dask, results in deal order
    play_loop     each finished chunk into the journals, totals and progress; finish
    runner        run(): check, claim, salvage, resume, play
    one_deal      one deal for `sim show`, played as a run plays it
    bench         kernel speed and command wall times for `sim bench`
"""
